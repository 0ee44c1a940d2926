/**
 * A fleet for the fleet-run tests: a sandbox on real Postgres with one app per tenant (each at the
 * same quota per window), a shared Postgres ledger, each tenant's legacy history on SQLite
 * (fleet-legacy.ts), the tenants bound to their apps in the ledger with their keys sealed by the
 * fleet key (what `fleet provision` leaves behind), and the fleet file.
 */
import { randomBytes } from 'node:crypto'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { expect } from 'vitest'

import { keyVault } from '../../src/fleet/key-vault.ts'
import type { RequestLogEntry } from '../../src/sandbox/request-log.ts'
import { ENTITIES } from '../../src/target/schemas.ts'
import { createTestDatabase, type TestDatabase } from './db.ts'
import { bindTenants, writeFleetFile } from './fleet-fixtures.ts'
import { expectedKeys, type TenantHistory, tenantSource, writeTenantLegacy } from './fleet-legacy.ts'
import { maxInWindow, sandboxKeys } from './loader-harness.ts'
import { startTestSandbox, type TestApp, type TestSandbox } from './sandbox.ts'

export interface FleetWorld {
  readonly dir: string
  readonly fleetFile: string
  readonly fleetId: string
  readonly ledger: TestDatabase
  readonly sbx: TestSandbox
  /** Tenant id → its app. */
  readonly apps: Map<string, TestApp>
  /** The environment of every fleet command (the fleet key). */
  readonly env: Record<string, string>
  close(): Promise<void>
}

export interface FleetWorldOptions {
  readonly tenants: readonly { id: string; history?: TenantHistory; source?: Record<string, unknown> }[]
  /** Import requests per window, every app (the sandbox's limit and chatferry's quota). */
  readonly perWindow: number
  readonly windowMs: number
  readonly load?: Record<string, unknown>
}

export async function createFleetWorld(o: FleetWorldOptions): Promise<FleetWorld> {
  const dir = mkdtempSync(join(tmpdir(), 'cf-fleet-'))
  const ledger = await createTestDatabase('cf_fleetrun')
  const sbx = await startTestSandbox()
  const fleetKey = randomBytes(32)
  const vault = keyVault(fleetKey)
  const fleetId = 'tfleet'
  const apps = new Map<string, TestApp>()
  for (const t of o.tenants) {
    apps.set(t.id, await sbx.app({ requestsPerMinute: o.perWindow, windowMs: o.windowMs }))
  }
  await bindTenants(ledger.url, fleetId, vault, apps)
  const tenants = o.tenants.map((t) => {
    let source = t.source
    if (source === undefined) {
      const file = join(dir, `${t.id}.db`)
      writeTenantLegacy(file, t.id, t.history ?? { users: 4, groups: 2, membersPerGroup: 3, messages: 30 })
      source = tenantSource(file, t.id)
    }
    return { id: t.id, name: `Tenant ${t.id}`, source }
  })
  const fleetFile = writeFleetFile(join(dir, 'fleet.yaml'), { ...o, fleetId, ledgerUrl: ledger.url, sandboxUrl: sbx.sandbox.url, tenants })
  return {
    dir,
    fleetFile,
    fleetId,
    ledger,
    sbx,
    apps,
    env: { CHATFERRY_FLEET_KEY: fleetKey.toString('base64') },
    async close() {
      await sbx.close()
      await ledger.drop()
    },
  }
}

/** The data-import requests the sandbox logged for a tenant's app, oldest first. */
export async function importRequests(world: FleetWorld, tenantId: string): Promise<RequestLogEntry[]> {
  return (await world.sbx.sandbox.requests(world.apps.get(tenantId)!.id)).filter((e) => ENTITIES.includes(e.endpoint as never))
}

/** How much lateness of a request's arrival (a busy machine's event-loop lag) the quota check forgives, and how many 429s it then allows. */
export interface ArrivalTolerance {
  /** The window checked is `windowMs − jitterMs`: a request that left at its slot but arrived late must not count as a burst. @default 0 */
  readonly jitterMs?: number
  /** @default 0 */
  readonly rateLimited?: number
}

/**
 * The tenant's app holds exactly its tenant's keys, each once; no item was created twice; no
 * window of `windowMs` (less the tolerated jitter) saw more than `perWindow` import requests
 * arrive, and at most `tolerance.rateLimited` were answered 429. Returns the app's import requests.
 */
export async function expectTenantLoaded(
  world: FleetWorld,
  tenantId: string,
  history: TenantHistory,
  perWindow: number,
  windowMs: number,
  tolerance: ArrivalTolerance = {},
): Promise<RequestLogEntry[]> {
  const app = world.apps.get(tenantId)!
  const held: string[] = []
  for (const entity of ENTITIES) {
    for (const [key, n] of await sandboxKeys(world.sbx.sandbox, app.id, entity)) {
      expect(n, `${tenantId} ${key}`).toBe(1)
      held.push(key)
    }
  }
  expect(held.sort()).toEqual(expectedKeys(tenantId, history).sort())
  const log = await importRequests(world, tenantId)
  const created = log.flatMap((e) => (e.items ?? []).filter((x) => x.result === 'created').map((x) => x.key))
  expect(created.length).toBe(new Set(created).size)
  expect(
    maxInWindow(
      log.map((e) => e.receivedAtMs),
      windowMs - (tolerance.jitterMs ?? 0),
    ),
  ).toBeLessThanOrEqual(perWindow)
  expect(log.filter((e) => e.status === 429).length).toBeLessThanOrEqual(tolerance.rateLimited ?? 0)
  return log
}
