/**
 * A fleet for the fleet-run tests: a sandbox on real Postgres with one app per tenant (each at the
 * same quota per window), a shared Postgres ledger, each tenant's legacy history on SQLite
 * (fleet-legacy.ts), the tenants bound to their apps in the ledger with their keys sealed by the
 * fleet key (what `fleet provision` leaves behind), and the fleet file.
 */
import { randomBytes } from 'node:crypto'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { stringify } from 'yaml'

import { keyVault } from '../../src/fleet/key-vault.ts'
import { openLedger } from '../../src/state/store.ts'
import { createTestDatabase, type TestDatabase } from './db.ts'
import { type TenantHistory, tenantSource, writeTenantLegacy } from './fleet-legacy.ts'
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
  const store = await openLedger({ url: ledger.url, poolSize: 2 })
  try {
    for (const t of o.tenants) {
      const app = await sbx.app({ requestsPerMinute: o.perWindow, windowMs: o.windowMs })
      apps.set(t.id, app)
      const jobId = `${fleetId}_${t.id}`
      await store.fleet.ensure({ fleetId, tenantId: t.id, jobId, appName: `Tenant ${t.id}`, region: 'us' })
      await store.fleet.update(fleetId, t.id, {
        appId: app.id,
        state: 'provisioned',
        sealedKey: vault.seal(app.apiKey, { fleetId, tenantId: t.id, appId: app.id }),
        keyId: vault.keyId,
      })
    }
  } finally {
    await store.close()
  }
  const tenants = o.tenants.map((t) => {
    let source = t.source
    if (source === undefined) {
      const file = join(dir, `${t.id}.db`)
      writeTenantLegacy(file, t.id, t.history ?? { users: 4, groups: 2, membersPerGroup: 3, messages: 30 })
      source = tenantSource(file, t.id)
    }
    return { id: t.id, name: `Tenant ${t.id}`, source }
  })
  const fleetFile = join(dir, 'fleet.yaml')
  writeFileSync(
    fleetFile,
    stringify({
      fleet: { id: fleetId },
      state: { url: ledger.url },
      defaults: {
        region: 'us',
        target: {
          baseUrl: `${sbx.sandbox.url}/apps/{appId}/v3`,
          quota: { requestsPerMinute: (o.perWindow * 60_000) / o.windowMs },
          timeoutMs: 5000,
        },
        load: { quotaWindowMs: o.windowMs, leaseSeconds: 10, ...o.load },
      },
      tenants,
    }),
  )
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
