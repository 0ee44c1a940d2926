/**
 * Issue 31, metrics of a fleet: `fleet run` and `fleet worker` with CHATFERRY_METRICS_PORT serve
 * Prometheus metrics per tenant, as processes against the sandbox on a real fleet ledger; each
 * scrape parses with a Prometheus text-format parser. During the run: the items done counted by the
 * two processes grow between scrapes, every tenant's counted (labels `fleet`, `tenant`, `job_id`), its items per entity and
 * state are the ledger's (`fleet status --json` taken at the same moment, once the plans are done:
 * planned + sent = remaining, done, skipped, rejected), its state gauge says `loading`, its quota is
 * the configured one; a worker's endpoint lists every tenant it serves. After the run, the
 * requests counted never exceed what each tenant's app received (the sandbox's log). No key in any
 * scrape.
 */
import parsePrometheusTextFormat, { type PromFamily } from 'parse-prometheus-text-format'
import { afterAll, beforeAll, expect, it } from 'vitest'

import type { TenantStatus } from '../../../src/fleet/fleet-status.ts'
import type { TenantHistory } from '../../helpers/fleet-legacy.ts'
import { createFleetWorld, type FleetWorld, importRequests } from '../../helpers/fleet-world.ts'
import { runCli } from '../../helpers/ledger-fixtures.ts'

const HISTORY: TenantHistory = { users: 6, groups: 2, membersPerGroup: 4, messages: 1500 }
const GOOD = ['acme', 'globex']
const PER_WINDOW = 1
const WINDOW_MS = 2000

let world: FleetWorld

beforeAll(async () => {
  world = await createFleetWorld({ tenants: GOOD.map((id) => ({ id, history: HISTORY })), perWindow: PER_WINDOW, windowMs: WINDOW_MS })
}, 120_000)

afterAll(async () => {
  await world?.close()
})

const value = (families: PromFamily[], name: string, labels: Record<string, string> = {}): number | undefined => {
  const family = families.find((f) => f.name === name)
  const sample = family?.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v))
  return sample?.value === undefined ? undefined : Number(sample.value)
}

function endpointOf(run: ReturnType<typeof runCli>): { url: () => Promise<string> } {
  let printed = ''
  run.child.stderr?.on('data', (d: Buffer) => (printed += d.toString()))
  run.child.stdout?.on('data', (d: Buffer) => (printed += d.toString()))
  return {
    url: async () => {
      await run.waitFor(/metrics at http:\/\/127\.0\.0\.1:\d+\/metrics/, 60_000)
      return /metrics at (http:\/\/127\.0\.0\.1:\d+\/metrics)/.exec(printed)?.[1] ?? ''
    },
  }
}

async function scrape(url: string): Promise<PromFamily[]> {
  const res = await fetch(url)
  expect(res.status).toBe(200)
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/)
  return parsePrometheusTextFormat(await res.text())
}

it('fleet run and fleet worker serve per-tenant metrics during the load, matching fleet status --json', async () => {
  const env = { ...world.env, CHATFERRY_METRICS_PORT: '0' }
  const worker = runCli(['fleet', 'worker', '--fleet', world.fleetFile], env)
  const workerEndpoint = endpointOf(worker)
  let run: ReturnType<typeof runCli> | undefined
  const texts: string[] = []
  try {
    const workerUrl = await workerEndpoint.url()
    await worker.waitFor('fleet worker serving', 60_000)
    run = runCli(['fleet', 'run', '--fleet', world.fleetFile], env)
    const url = await endpointOf(run).url()

    // Once a tenant loads its messages (users, groups and members settled: stable between reads),
    // its ledger gauges are its fleet status --json line, taken right after the scrape.
    const settled = (f: PromFamily[], t: string) =>
      value(f, 'chatferry_fleet_tenant_state', { tenant: t, state: 'loading' }) === 1 &&
      ['users', 'groups', 'members'].every(
        (e) =>
          value(f, 'chatferry_items', { tenant: t, entity: e, state: 'planned' }) === 0 &&
          value(f, 'chatferry_items', { tenant: t, entity: e, state: 'sent' }) === 0,
      ) &&
      (value(f, 'chatferry_items', { tenant: t, entity: 'messages', state: 'planned' }) ?? 0) +
        (value(f, 'chatferry_items', { tenant: t, entity: 'messages', state: 'sent' }) ?? 0) >
        0
    const deadline = Date.now() + 120_000
    let first: PromFamily[] = []
    const checked = new Set<string>()
    while (checked.size < GOOD.length) {
      expect(Date.now()).toBeLessThan(deadline)
      first = await scrape(url).catch((err: unknown) => {
        throw new Error(`the run's endpoint is gone (${String(err)}); tenants checked: ${[...checked].join(', ')}`)
      })
      const ready = GOOD.filter((t) => !checked.has(t) && settled(first, t))
      if (ready.length === 0) {
        await new Promise((r) => setTimeout(r, 300))
        continue
      }
      const status = JSON.parse(
        (await runCli(['fleet', 'status', '--fleet', world.fleetFile, '--json'], { CHATFERRY_FLEET_KEY: '' }).done).stdout,
      ) as {
        tenants: TenantStatus[]
      }
      for (const t of status.tenants.filter((x) => ready.includes(x.tenantId))) {
        checked.add(t.tenantId)
        const labels = { fleet: world.fleetId, tenant: t.tenantId, job_id: t.jobId }
        expect(value(first, 'chatferry_quota_items_per_minute', labels)).toBe(t.quotaItemsPerMinute)
        for (const e of t.entities.filter((x) => x.entity !== 'messages')) {
          const at = (state: string) => value(first, 'chatferry_items', { ...labels, entity: e.entity, state }) ?? NaN
          expect([at('done'), at('skipped'), at('rejected'), at('planned') + at('sent')], `${t.tenantId} ${e.entity}`).toEqual([
            e.done,
            e.skipped,
            e.rejected,
            e.remaining,
          ])
        }
        const total = (state: string) => value(first, 'chatferry_items', { ...labels, entity: 'messages', state }) ?? NaN
        expect(total('planned') + total('sent') + total('done') + total('skipped') + total('rejected')).toBe(HISTORY.messages)
      }
    }

    // The counters grow per tenant while the load goes on (in this process and the worker: both load).
    const both = async () => [...(await scrape(url)), ...(await scrape(workerUrl))]
    const before = await both()
    let later = before
    const sum = (f: PromFamily[], name: string, labels: Record<string, string> = {}) =>
      (f.find((x) => x.name === name)?.metrics ?? [])
        .filter((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v))
        .reduce((a, m) => a + Number(m.value), 0)
    // A tenant may have finished by now: the fleet's done items grow, and every tenant's are counted.
    const grown = () =>
      sum(later, 'chatferry_loader_items_total', { outcome: 'done' }) > sum(before, 'chatferry_loader_items_total', { outcome: 'done' }) &&
      GOOD.every((t) => sum(later, 'chatferry_loader_items_total', { tenant: t, outcome: 'done' }) > 0)
    while (!grown()) {
      expect(Date.now()).toBeLessThan(deadline + 60_000)
      await new Promise((r) => setTimeout(r, 1000))
      later = await both()
      texts.push(JSON.stringify(later))
    }
    const types = Object.fromEntries(later.map((f) => [f.name, f.type]))
    expect(types).toMatchObject({
      chatferry_loader_requests_total: 'COUNTER',
      chatferry_loader_rate_limited_total: 'COUNTER',
      chatferry_items: 'GAUGE',
      chatferry_fleet_tenant_state: 'GAUGE',
    })

    // The worker's endpoint: every tenant it serves, labelled.
    const w = await scrape(workerUrl)
    texts.push(JSON.stringify(w))
    for (const t of GOOD) {
      expect(value(w, 'chatferry_quota_items_per_minute', { fleet: world.fleetId, tenant: t })).toBe(((PER_WINDOW * 60_000) / WINDOW_MS) * 50)
    }

    const ran = await run.done
    expect(ran.code, ran.stderr.slice(-3000)).toBe(0)
    // What the endpoints counted was sent: never more than each app received.
    for (const t of GOOD) {
      expect(sum(later, 'chatferry_loader_requests_total', { tenant: t })).toBeGreaterThan(0)
      expect(sum(later, 'chatferry_loader_requests_total', { tenant: t })).toBeLessThanOrEqual((await importRequests(world, t)).length)
    }
    const all = texts.join('\n')
    for (const secret of [world.env.CHATFERRY_FLEET_KEY!, ...[...world.apps.values()].map((a) => a.apiKey)]) {
      expect(all).not.toContain(secret)
    }
  } finally {
    run?.child.kill('SIGTERM')
    worker.child.kill('SIGTERM')
  }
  expect((await worker.done).code).toBe(0)
}, 400_000)
