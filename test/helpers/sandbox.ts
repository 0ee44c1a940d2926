/**
 * Starts a sandbox on a fresh real Postgres database for one test file, and gives each test its
 * own app (own keys, data, quota and settings), a typed client for it and raw HTTP helpers.
 */
import { afterAll, beforeAll } from 'vitest'

import { type AppSettingsPatch, type Sandbox, type SandboxApp, type SandboxOptions, startSandbox } from '../../src/sandbox/index.ts'
import { createManagementClient, createPlatformClient, type ManagementClient, type PlatformClient } from '../../src/target/client.ts'
import { createTestDatabase, type TestDatabase } from './db.ts'
import { MGMT, testSecret } from './secrets.ts'

export { MGMT }

export interface TestApp extends SandboxApp {
  readonly client: PlatformClient
}

export interface TestSandbox {
  readonly sandbox: Sandbox
  readonly database: TestDatabase | undefined
  readonly mgmt: ManagementClient
  /** A new app with its own settings (on top of the defaults) and a client for it. */
  app(settings?: AppSettingsPatch): Promise<TestApp>
  close(): Promise<void>
}

export async function startTestSandbox(options: Partial<SandboxOptions> = {}): Promise<TestSandbox> {
  // On Postgres, not the embedded default: on PGlite every request the sandbox answers costs the
  // test process's own CPU (test/integration/sandbox/sandbox-embedded.test.ts covers that store).
  let database: TestDatabase | undefined
  let state = options.state
  if (state === undefined) {
    database = await createTestDatabase('sbx')
    state = { url: database.url, poolSize: 5 }
  }
  const sandbox = await startSandbox({ management: MGMT, ...options, state })
  const mgmt = createManagementClient({ url: sandbox.url, ...MGMT })
  let n = 0
  return {
    sandbox,
    database,
    mgmt,
    async app(settings) {
      n++
      const app = await sandbox.createApp({
        id: `t${n}-${Math.random().toString(36).slice(2, 8)}`,
        apiKey: testSecret('apikey'),
        ...(settings ? { settings } : {}),
      })
      return { ...app, client: createPlatformClient({ baseUrl: app.baseUrl, apiKey: app.apiKey, timeoutMs: 10_000 }) }
    },
    async close() {
      await sandbox.close()
      await database?.drop()
    },
  }
}

export interface RawResponse {
  readonly status: number
  readonly headers: Headers
  readonly body: any
}

/** A plain HTTP request, as a curl user would send it; the body is JSON unless it is a string. */
export async function http(url: string, init: { method?: string; headers?: Record<string, string>; body?: unknown } = {}): Promise<RawResponse> {
  const headers: Record<string, string> = {
    ...(init.body !== undefined && typeof init.body !== 'string' ? { 'content-type': 'application/json' } : {}),
    ...init.headers,
  }
  const res = await fetch(url, {
    method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
    headers,
    body: init.body === undefined ? null : typeof init.body === 'string' ? init.body : JSON.stringify(init.body),
  })
  const text = await res.text()
  let body: unknown
  try {
    body = text === '' ? undefined : JSON.parse(text)
  } catch {
    body = text
  }
  return { status: res.status, headers: res.headers, body }
}

/** POST to an app's data-import endpoint with its key. */
export function importRaw(app: SandboxApp, entity: string, body: unknown, headers: Record<string, string> = {}): Promise<RawResponse> {
  return http(`${app.baseUrl}/data_import/${entity}`, { method: 'POST', headers: { apikey: app.apiKey, ...headers }, body })
}

/** A request to the management or sandbox-only interface with the test credentials. */
export function mgmtRaw(
  sandbox: Sandbox,
  path: string,
  init: { method?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<RawResponse> {
  return http(`${sandbox.url}${path}`, { ...init, headers: { ...init.headers, key: MGMT.key, secret: MGMT.secret } })
}

export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000)
}

/** `{<key>: item}` from items and their key field. */
export function mapOf<T extends Record<string, unknown>>(items: readonly T[], keyField: keyof T): Record<string, T> {
  return Object.fromEntries(items.map((i) => [String(i[keyField]), i]))
}

/** Imports users u0..u(n-1) (or the given uids) and returns their uids. */
export async function seedUsers(app: TestApp, uids: readonly string[]): Promise<void> {
  for (let i = 0; i < uids.length; i += 50) {
    const res = await app.client.importUsers(uids.slice(i, i + 50).map((uid) => ({ uid, name: `User ${uid}` })))
    for (const [key, r] of res.results) {
      if (!r.ok) {
        throw new Error(`seeding user ${key} failed: ${r.code}`)
      }
    }
  }
}

export async function seedGroup(app: TestApp, guid: string, createdAt: number, owner?: string): Promise<void> {
  const res = await app.client.importGroups([{ guid, name: `Group ${guid}`, type: 'public', createdAt, ...(owner ? { owner } : {}) }])
  const r = res.results.get(guid)
  if (!r?.ok) {
    throw new Error(`seeding group ${guid} failed`)
  }
}

/** A file's shared sandbox (started before its first test) and the cleanups its tests register. */
export interface FileSandbox {
  /** The sandbox; valid from the first test on. */
  readonly tsb: TestSandbox
  /** Run in reverse order after the file's last test, before the sandbox closes (failures ignored). */
  readonly cleanups: (() => Promise<void>)[]
}

/** Starts one sandbox for the calling test file (in `beforeAll`) and closes it after its cleanups. */
export function useFileSandbox(options: Partial<SandboxOptions> = {}): FileSandbox {
  let tsb: TestSandbox | undefined
  const cleanups: (() => Promise<void>)[] = []
  beforeAll(async () => {
    tsb = await startTestSandbox(options)
  })
  afterAll(async () => {
    for (const c of cleanups.reverse()) {
      await c().catch(() => {})
    }
    await tsb?.close()
  })
  return {
    get tsb() {
      if (tsb === undefined) {
        throw new Error('the file sandbox is used before its beforeAll ran')
      }
      return tsb
    },
    cleanups,
  }
}
