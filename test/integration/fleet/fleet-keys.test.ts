/**
 * Every fleet command that touches a tenant proves the fleet key first (src/fleet/key-vault.ts
 * `proveFleetKey`), as processes on a real Postgres ledger and the sandbox over HTTP, the tenants
 * bound to their apps with their keys sealed:
 * - `fleet deprovision` with a wrong (well-formed) fleet key exits 2 and sends nothing: the app is
 *   still there, its binding untouched, and the sandbox's request log holds no management DELETE;
 *   the right key then deletes it (so the log would have shown a DELETE);
 * - `fleet worker` with a wrong key exits 2 at once, naming the fleet key and every tenant;
 * - `fleet worker` whose key opens one tenant's stored key but not the other's serves the first
 *   and names the second, with its reason, in its health line (`fleet worker serving`).
 */
import { randomBytes } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'

import { afterAll, beforeAll, expect, it } from 'vitest'
import { parse, stringify } from 'yaml'

import { keyVault } from '../../../src/fleet/key-vault.ts'
import { openLedger } from '../../../src/state/store.ts'
import { createFleetWorld, type FleetWorld } from '../../helpers/fleet-world.ts'
import { runCli } from '../../helpers/ledger-fixtures.ts'
import { MGMT } from '../../helpers/sandbox.ts'

const WRONG_KEY = randomBytes(32).toString('base64')
let world: FleetWorld
let env: Record<string, string>

beforeAll(async () => {
  world = await createFleetWorld({ tenants: [{ id: 'acme' }, { id: 'globex' }], perWindow: 60, windowMs: 2000 })
  // The fleet file with the management interface, for deprovision.
  const doc = parse(readFileSync(world.fleetFile, 'utf8')) as Record<string, unknown>
  doc.management = { url: world.sbx.sandbox.url, key: '${CF_MGMT_KEY}', secret: '${CF_MGMT_SECRET}' }
  writeFileSync(world.fleetFile, stringify(doc))
  env = { ...world.env, CF_MGMT_KEY: MGMT.key, CF_MGMT_SECRET: MGMT.secret }
})

afterAll(async () => {
  await world?.close()
})

async function appCalls(tenantId: string): Promise<string[]> {
  const log = await world.sbx.sandbox.requests(world.apps.get(tenantId)!.id)
  return log.filter((e) => e.endpoint === 'apps').map((e) => `${e.method} ${e.status}`)
}

async function stateOf(tenantId: string): Promise<string | undefined> {
  const store = await openLedger({ url: world.ledger.url, poolSize: 1 })
  try {
    return (await store.fleet.binding(world.fleetId, tenantId))?.state
  } finally {
    await store.close()
  }
}

it('deprovision with a wrong fleet key exits 2 and sends no DELETE; the right key deletes', async () => {
  const deprovision = (key: string) =>
    runCli(['fleet', 'deprovision', '--fleet', world.fleetFile, '--tenant', 'acme', '--yes'], { ...env, CHATFERRY_FLEET_KEY: key }).done
  const wrong = await deprovision(WRONG_KEY)
  expect(wrong.code, wrong.stderr).toBe(2)
  expect(wrong.stderr).toContain('the stored key of tenant acme')
  expect(wrong.stderr).toContain('does not open with CHATFERRY_FLEET_KEY')
  expect(wrong.stderr).not.toContain(WRONG_KEY)
  expect(await appCalls('acme')).toEqual([])
  expect(await stateOf('acme')).toBe('provisioned')
  expect((await world.sbx.mgmt.listApps({ searchKey: world.apps.get('acme')!.id })).length).toBe(1)

  const right = await deprovision(env.CHATFERRY_FLEET_KEY as string)
  expect(right.code, right.stderr).toBe(0)
  expect(await appCalls('acme')).toEqual(['DELETE 200'])
  expect(await stateOf('acme')).toBe('deleted')
})

it('fleet worker with a wrong fleet key exits 2 at once, naming the key and the tenants it does not open', async () => {
  const r = await runCli(['fleet', 'worker', '--fleet', world.fleetFile], { ...env, CHATFERRY_FLEET_KEY: WRONG_KEY }).done
  expect(r.code, r.stderr).toBe(2)
  expect(r.stderr).toContain("CHATFERRY_FLEET_KEY: opens no tenant's stored key (globex)")
  // acme, deprovisioned above, is left out with the fleet's one line about it.
  expect(r.stderr).toContain('left out, deprovisioned (their apps deleted): tenants[0] (id acme')
  expect(r.stderr).not.toContain(WRONG_KEY)
})

it('fleet worker whose key opens one tenant but not another serves the one and names the other in its health line', async () => {
  // acme bound again with the fleet's key (the worker sends nothing to an app without work);
  // globex's stored key sealed again with another fleet key.
  const store = await openLedger({ url: world.ledger.url, poolSize: 1 })
  const reseal = async (tenantId: string, vault: ReturnType<typeof keyVault>) => {
    const app = world.apps.get(tenantId)!
    await store.fleet.update(world.fleetId, tenantId, {
      state: 'provisioned',
      sealedKey: vault.seal(app.apiKey, { fleetId: world.fleetId, tenantId, appId: app.id }),
      keyId: vault.keyId,
    })
  }
  try {
    await reseal('acme', keyVault(Buffer.from(env.CHATFERRY_FLEET_KEY as string, 'base64')))
    await reseal('globex', keyVault(randomBytes(32)))
  } finally {
    await store.close()
  }
  const worker = runCli(['fleet', 'worker', '--fleet', world.fleetFile], env)
  try {
    await worker.waitFor('fleet worker serving')
  } finally {
    worker.child.kill('SIGTERM')
  }
  const r = await worker.done
  expect(r.code, r.stderr).toBe(0)
  const health = r.stderr
    .split('\n')
    .filter((l) => l.includes('fleet worker serving'))
    .map((l) => JSON.parse(l) as { served: string[]; notServed: Record<string, string> })
  expect(health.length).toBe(1)
  expect(health[0]?.served).toEqual(['acme'])
  expect(Object.keys(health[0]?.notServed ?? {})).toEqual(['globex'])
  expect(health[0]?.notServed.globex).toContain('does not open with CHATFERRY_FLEET_KEY')
})
