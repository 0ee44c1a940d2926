/**
 * What `fleet provision` leaves behind, for the fleet-run tests and the fleet benchmark: each
 * tenant bound to its app in the ledger (`store.fleet`, state `provisioned`, its key sealed with
 * the fleet key), and the fleet file over the sandbox (no vitest here: the benchmark uses it too).
 */
import { writeFileSync } from 'node:fs'

import { stringify } from 'yaml'

import type { KeyVault } from '../../src/fleet/key-vault.ts'
import { openLedger } from '../../src/state/store.ts'

/** Binds every tenant to its app (`id`, `apiKey`) in the fleet's ledger, keys sealed by `vault`. */
export async function bindTenants(
  ledgerUrl: string,
  fleetId: string,
  vault: KeyVault,
  apps: ReadonlyMap<string, { id: string; apiKey: string }>,
): Promise<void> {
  const store = await openLedger({ url: ledgerUrl, poolSize: 2 })
  try {
    for (const [tenantId, app] of apps) {
      await store.fleet.ensure({ fleetId, tenantId, jobId: `${fleetId}_${tenantId}`, appName: `Tenant ${tenantId}`, region: 'us' })
      await store.fleet.update(fleetId, tenantId, {
        appId: app.id,
        state: 'provisioned',
        sealedKey: vault.seal(app.apiKey, { fleetId, tenantId, appId: app.id }),
        keyId: vault.keyId,
      })
    }
  } finally {
    await store.close()
  }
}

export interface FleetFileOptions {
  readonly fleetId: string
  readonly ledgerUrl: string
  readonly sandboxUrl: string
  readonly tenants: readonly { id: string; source: Record<string, unknown> }[]
  /** Import requests per window of every tenant's app. */
  readonly perWindow: number
  readonly windowMs: number
  readonly load?: Record<string, unknown>
  /** `target.timeoutMs` of every tenant. @default 5000 (the tests' 10 s leases must outlast it) */
  readonly timeoutMs?: number
}

/** Writes the fleet file: every tenant in region us on the sandbox, at the same quota. */
export function writeFleetFile(file: string, o: FleetFileOptions): string {
  writeFileSync(
    file,
    stringify({
      fleet: { id: o.fleetId },
      state: { url: o.ledgerUrl },
      defaults: {
        region: 'us',
        target: {
          baseUrl: `${o.sandboxUrl}/apps/{appId}/v3`,
          quota: { requestsPerMinute: (o.perWindow * 60_000) / o.windowMs },
          timeoutMs: o.timeoutMs ?? 5000,
        },
        load: { quotaWindowMs: o.windowMs, leaseSeconds: 10, ...o.load },
      },
      tenants: o.tenants.map((t) => ({ id: t.id, name: `Tenant ${t.id}`, source: t.source })),
    }),
  )
  return file
}
