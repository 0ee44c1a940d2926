/**
 * `fleet provision` against a management interface that refuses a quarter of its calls with 429
 * (the sandbox's management fault setting: the wait only in the text, as the data-import
 * interface documents it), as processes on a real Postgres ledger: one pass provisions every
 * tenant, each app created once, and every call the sandbox answered (not 429) was needed — no
 * more than the minimum. A SIGKILL in the middle of such a pass, and a rerun, end the same way:
 * every tenant provisioned, each app created once (the sandbox's management call log).
 */
import { afterEach, expect, it } from 'vitest'

import { createPublishedFleet, type PublishedFleet } from '../../helpers/fleet-published.ts'

const TENANTS = ['t1', 't2', 't3', 't4', 't5', 't6'].map((id) => ({ id, history: { users: 2, groups: 1, membersPerGroup: 2, messages: 2 } }))
/** Calls one tenant needs at least: the look-up by name, the create, extensions, team. */
const PER_TENANT = 4
let fleet: PublishedFleet | undefined

afterEach(async () => {
  await fleet?.close()
  fleet = undefined
})

async function stormFleet(seed: number): Promise<PublishedFleet> {
  return createPublishedFleet({
    tenants: TENANTS,
    sandbox: { managementFaults: { rate429: 0.25, retryAfterSeconds: 0.2, seed } },
    management: { requestsPerMinute: 600 },
    app: { extensions: ['polls'], team: { admins: ['ops@example.com'] } },
  })
}

async function expectProvisionedOnce(f: PublishedFleet): Promise<void> {
  const apps = await f.appIds()
  expect([...apps.keys()].sort()).toEqual(TENANTS.map((t) => t.id))
  const store = f.sbx.sandbox.store
  const named = await store.selectFrom('apps').select(['id', 'name']).where('name', 'like', `${f.fleetId} %`).execute()
  expect(named.map((a) => a.id).sort()).toEqual([...apps.values()].sort())
  const created = f.sbx.sandbox.management.calls().filter((c) => c.method === 'POST' && c.path === '/apps' && c.status === 200)
  expect(created.length).toBe(TENANTS.length)
  const status = await f.cli(['status', '--json']).done
  expect(status.code, status.stderr).toBe(0)
}

it('a 429 storm on the management interface: one pass provisions every tenant, each app once, at the minimum of calls', async () => {
  fleet = await stormFleet(11)
  const r = await fleet.cli(['provision']).done
  expect(r.code, r.stdout + r.stderr).toBe(0)
  await expectProvisionedOnce(fleet)
  const calls = fleet.sbx.sandbox.management.calls()
  expect(calls.filter((c) => c.status === 429).length).toBeGreaterThan(3)
  // The credentials check, then each tenant's calls; nothing answered was sent twice.
  expect(calls.filter((c) => c.status !== 429).length).toBe(1 + PER_TENANT * TENANTS.length)
  expect(calls.every((c) => c.status === 200 || c.status === 429)).toBe(true)
})

it('a SIGKILL during a stormy pass: the rerun provisions every tenant, each app created once', async () => {
  fleet = await stormFleet(23)
  const f = fleet
  const first = f.cli(['provision'])
  await new Promise<void>((resolve, reject) => {
    const t = setInterval(() => {
      const created = f.sbx.sandbox.management.calls().filter((c) => c.method === 'POST' && c.path === '/apps' && c.status === 200)
      if (created.length >= 3) {
        clearInterval(t)
        resolve()
      }
    }, 5)
    void first.done.then(() => (clearInterval(t), reject(new Error('provision ended before it was killed'))))
  })
  first.child.kill('SIGKILL')
  expect((await first.done).signal).toBe('SIGKILL')
  const r = await f.cli(['provision']).done
  expect(r.code, r.stdout + r.stderr).toBe(0)
  await expectProvisionedOnce(f)
})
