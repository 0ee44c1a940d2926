/**
 * A deprovisioned tenant, as processes against the sandbox in its published defaults: after
 * `fleet deprovision`, `fleet run` and `fleet status` leave it out (it failed every later run with
 * exit 2, and status listed it by its last run) and each says once, on stderr, exactly what to
 * remove from the fleet file; named with `--tenant`, it still fails, needing a fix.
 */
import { afterAll, beforeAll, expect, it } from 'vitest'

import { createPublishedFleet, type PublishedFleet } from '../../helpers/fleet-published.ts'

let fleet: PublishedFleet
const HISTORY = { users: 3, groups: 1, membersPerGroup: 2, messages: 5 }

beforeAll(async () => {
  fleet = await createPublishedFleet({
    tenants: [
      { id: 'acme', history: HISTORY },
      { id: 'globex', history: HISTORY },
    ],
  })
  for (const args of [['provision'], ['run'], ['deprovision', '--tenant', 'globex', '--yes']]) {
    const r = await fleet.cli(args).done
    expect(r.code, `${args.join(' ')}: ${r.stdout}${r.stderr.slice(-2000)}`).toBe(0)
  }
})

afterAll(async () => {
  await fleet?.close()
})

const NOTE = 'left out, deprovisioned (their apps deleted): tenants[1] (id globex, app '

it('fleet run leaves the deprovisioned tenant out and exits 0, saying once what to remove', async () => {
  const r = await fleet.cli(['run', '--json']).done
  expect(r.code, r.stdout + r.stderr.slice(-2000)).toBe(0)
  const summary = JSON.parse(r.stdout) as { tenants: { tenantId: string; state: string }[] }
  expect(summary.tenants.map((t) => [t.tenantId, t.state])).toEqual([['acme', 'done']])
  expect(r.stderr.split(NOTE).length - 1).toBe(1)
  expect(r.stderr).toContain(`remove it from ${fleet.file}`)
})

it('fleet status lists only the live tenant, and says what to remove', async () => {
  const r = await fleet.cli(['status', '--json']).done
  expect(r.code, r.stderr).toBe(0)
  const status = JSON.parse(r.stdout) as { tenants: { tenantId: string; state: string; lastError: string | null }[] }
  expect(status.tenants.map((t) => [t.tenantId, t.state, t.lastError])).toEqual([['acme', 'done', null]])
  expect(r.stderr).toContain(NOTE)
})

it('named with --tenant, the deprovisioned tenant fails, needing a fix (exit 2)', async () => {
  const r = await fleet.cli(['run', '--tenant', 'globex']).done
  expect(r.code, r.stdout).toBe(2)
  expect(r.stdout).toContain('was deprovisioned (deleted)')
})

it('fleet plan and fleet status need no management credentials (they send nothing to it); provision does', async () => {
  const without = { CF_MGMT_KEY: '', CF_MGMT_SECRET: '' }
  const plan = await fleet.cli(['plan', '--out', `${fleet.dir}/plan`], without).done
  expect(plan.code, plan.stdout + plan.stderr.slice(-2000)).toBe(0)
  expect(plan.stderr).not.toContain('management')
  const status = await fleet.cli(['status'], without).done
  expect(status.code, status.stderr).toBe(0)
  const provision = await fleet.cli(['provision'], without).done
  expect(provision.code).toBe(2)
  expect(provision.stderr).toContain('management.key')
})
