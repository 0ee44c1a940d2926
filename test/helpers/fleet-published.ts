/**
 * A fleet against the sandbox in its published defaults, driven through the CLI from the start:
 * the sandbox's management interface (apps created with the platform's sample users unless told
 * not to), a fresh Postgres ledger, the fleet key, each tenant's legacy history on SQLite
 * (fleet-legacy.ts) and a fleet file with `management:` — nothing bound by hand, so `fleet
 * provision` creates every app as a vendor's would be created.
 */
import { randomBytes } from 'node:crypto'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { stringify } from 'yaml'

import type { SandboxOptions } from '../../src/sandbox/index.ts'
import { openLedger } from '../../src/state/store.ts'
import { ENTITIES } from '../../src/target/schemas.ts'
import { createTestDatabase, type TestDatabase } from './db.ts'
import { type TenantHistory, tenantSource, writeTenantLegacy } from './fleet-legacy.ts'
import { runCli } from './ledger-fixtures.ts'
import { sandboxKeys } from './loader-harness.ts'
import { MGMT, startTestSandbox, type TestSandbox } from './sandbox.ts'

export interface PublishedTenant {
  readonly id: string
  /** Its legacy history (a SQLite file of its own), unless `source` is given. */
  readonly history?: TenantHistory
  readonly source?: Record<string, unknown>
}

export interface PublishedFleet {
  readonly dir: string
  readonly file: string
  readonly fleetId: string
  readonly ledger: TestDatabase
  readonly sbx: TestSandbox
  /** The environment of every fleet command: the fleet key and the management credentials. */
  readonly env: Record<string, string>
  readonly fleetKey: Buffer
  /** `chatferry fleet <args> --fleet <file>` as a process. */
  cli(args: readonly string[], env?: Record<string, string>): ReturnType<typeof runCli>
  /** Tenant id → its bound app id (from the ledger). */
  appIds(): Promise<Map<string, string>>
  /** Every key the app holds, all entities, sorted; a key held twice appears twice. */
  heldKeys(appId: string): Promise<string[]>
  close(): Promise<void>
}

export interface PublishedFleetOptions {
  readonly tenants: readonly PublishedTenant[]
  /** Shared sources (`sources:`), for templated tenants. */
  readonly sources?: Record<string, unknown>
  readonly sandbox?: Partial<SandboxOptions>
  /** Extra `management:` settings (pacing). */
  readonly management?: Record<string, unknown>
  /** The management URL when not the sandbox's own (a proxy). */
  readonly managementUrl?: string
  /** `defaults.app` of the fleet file (extensions, team, webhooks). */
  readonly app?: Record<string, unknown>
}

export async function createPublishedFleet(o: PublishedFleetOptions): Promise<PublishedFleet> {
  const dir = mkdtempSync(join(tmpdir(), 'cf-fleetpub-'))
  const ledger = await createTestDatabase('cf_fleetpub')
  const sbx = await startTestSandbox({ maxApps: 500, ...o.sandbox })
  const fleetKey = randomBytes(32)
  const fleetId = `pub${randomBytes(3).toString('hex')}`
  const tenants = o.tenants.map((t) => {
    let source = t.source
    if (source === undefined) {
      const file = join(dir, `${t.id}.db`)
      writeTenantLegacy(file, t.id, t.history ?? { users: 4, groups: 2, membersPerGroup: 3, messages: 20 })
      source = tenantSource(file, t.id)
    }
    return { id: t.id, name: `${fleetId} ${t.id}`, source }
  })
  const file = join(dir, 'fleet.yaml')
  writeFileSync(
    file,
    stringify({
      fleet: { id: fleetId },
      state: { url: ledger.url },
      management: { url: o.managementUrl ?? sbx.sandbox.url, key: '${CF_MGMT_KEY}', secret: '${CF_MGMT_SECRET}', ...o.management },
      ...(o.sources ? { sources: o.sources } : {}),
      defaults: {
        region: 'us',
        target: { baseUrl: `${sbx.sandbox.url}/apps/{appId}/v3`, quota: { requestsPerMinute: 1200 }, timeoutMs: 5000 },
        load: { quotaWindowMs: 2000, leaseSeconds: 10 },
        ...(o.app ? { app: o.app } : {}),
      },
      tenants,
    }),
  )
  const env = { CHATFERRY_FLEET_KEY: fleetKey.toString('base64'), CF_MGMT_KEY: MGMT.key, CF_MGMT_SECRET: MGMT.secret }
  return {
    dir,
    file,
    fleetId,
    ledger,
    sbx,
    env,
    fleetKey,
    cli: (args, extra = {}) => runCli(['fleet', ...args, '--fleet', file], { ...env, ...extra }),
    async appIds() {
      const store = await openLedger({ url: ledger.url, poolSize: 1 })
      try {
        return new Map((await store.fleet.bindings(fleetId)).flatMap((b) => (b.appId ? [[b.tenantId, b.appId] as const] : [])))
      } finally {
        await store.close()
      }
    },
    async heldKeys(appId) {
      const held: string[] = []
      for (const entity of ENTITIES) {
        for (const [key, n] of await sandboxKeys(sbx.sandbox, appId, entity)) {
          held.push(...Array.from({ length: n }, () => key))
        }
      }
      return held.sort()
    },
    async close() {
      await sbx.close()
      await ledger.drop()
    },
  }
}
