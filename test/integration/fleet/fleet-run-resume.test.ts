/**
 * Kill and resume a fleet: `fleet run` and a `fleet worker` are SIGKILLed while every tenant is
 * mid-load; `fleet status` then calls the tenants interrupted with work remaining; `fleet run`
 * again finishes every tenant. From the sandbox: each app holds its tenant's keys exactly once, no
 * item was created twice, and each app's quota held across the kill (the budget lives in Postgres).
 */
import { afterAll, beforeAll, expect, it } from 'vitest'

import type { TenantHistory } from '../../helpers/fleet-legacy.ts'
import { createFleetWorld, expectTenantLoaded, type FleetWorld, importRequests } from '../../helpers/fleet-world.ts'
import { runCli } from '../../helpers/ledger-fixtures.ts'

const WINDOW_MS = 2000
const PER_WINDOW = 2
const HISTORY: TenantHistory = { users: 4, groups: 2, membersPerGroup: 3, messages: 500 }
const TENANTS = ['north', 'south', 'east']

let world: FleetWorld

beforeAll(async () => {
  world = await createFleetWorld({ tenants: TENANTS.map((id) => ({ id, history: HISTORY })), perWindow: PER_WINDOW, windowMs: WINDOW_MS })
})

afterAll(async () => {
  await world?.close()
})

it('a fleet killed mid-load (run and worker) resumes with the next fleet run: nothing lost, nothing sent twice, quotas held', async () => {
  const fleet = (...args: string[]) => runCli(['fleet', ...args, '--fleet', world.fleetFile], world.env)
  const worker = fleet('worker')
  await worker.waitFor('fleet worker serving')
  const first = fleet('run')
  // Until every tenant has sent messages (its fourth request), then kill both processes.
  const until = Date.now() + 90_000
  for (;;) {
    const counts = await Promise.all(TENANTS.map(async (id) => (await importRequests(world, id)).length))
    if (counts.every((n) => n >= 4)) {
      break
    }
    expect(Date.now(), `requests so far: ${counts.join(', ')}`).toBeLessThan(until)
    await new Promise((r) => setTimeout(r, 200))
  }
  first.child.kill('SIGKILL')
  worker.child.kill('SIGKILL')
  await Promise.all([first.done, worker.done])

  const status = await fleet('status', '--json').done
  expect(status.code, status.stderr).toBe(0)
  const lines = (JSON.parse(status.stdout) as { tenants: { tenantId: string; state: string; remaining: number }[] }).tenants
  for (const l of lines) {
    expect(l.state, l.tenantId).toBe('interrupted')
    expect(l.remaining, l.tenantId).toBeGreaterThan(0)
  }

  const again = await fleet('run').done
  expect(again.code, again.stderr.slice(-3000)).toBe(0)
  expect(again.stdout).toContain('every tenant is done')

  for (const id of TENANTS) {
    // Three processes on a busy 2-core machine: a request may arrive up to half a second after its
    // slot (the quota's guard is 250 ms), so the check forgives that much lateness and a 429 or two.
    await expectTenantLoaded(world, id, HISTORY, PER_WINDOW, WINDOW_MS, { jitterMs: 500, rateLimited: 2 })
  }
}, 240_000)
