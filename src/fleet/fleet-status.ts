/**
 * `chatferry fleet status`: one line per tenant, from the ledger only (no API key, no source):
 * its state (from its newest `run`/`delta` row, written by `fleet run`, and whether a loader of it
 * is alive), done/remaining per entity, its rate in the last minute against its app's quota, the ETA
 * at that quota, its rejects and its last error (none older than its newest finished run). Whether a `running` row's process died is the
 * caller's rule (src/job/run-liveness.ts), passed in as `deadReason`.
 */
import { formatDuration } from '../format-duration.ts'
import type { QuotaInfo } from '../load/progress.ts'
import type { LedgerStore, RunRecord } from '../state/store.ts'
import { ENTITIES } from '../target/schemas.ts'

export const TENANT_LOAD_STATES = ['not provisioned', 'not started', 'planning', 'loading', 'done', 'rejected', 'failed', 'interrupted'] as const
export type TenantLoadState = (typeof TENANT_LOAD_STATES)[number]

export interface TenantStatusInput {
  readonly tenantId: string
  readonly jobId: string
  readonly appId: string
  readonly quota: QuotaInfo
  /** Why the tenant has no usable app yet (its binding), when it has none. */
  readonly unbound?: string
}

export interface TenantStatus {
  readonly tenantId: string
  readonly jobId: string
  readonly appId: string
  readonly state: TenantLoadState
  readonly entities: readonly { entity: string; done: number; skipped: number; rejected: number; remaining: number }[]
  readonly done: number
  readonly remaining: number
  readonly rejected: number
  readonly itemsLastMinute: number
  readonly quotaItemsPerMinute: number
  /** Items done in the last minute ÷ what the app's quota allows in a minute. */
  readonly rateVsQuota: number
  /** Seconds to load what remains at the app's quota (null: nothing remains). */
  readonly etaSeconds: number | null
  readonly lastRun: { id: number; mode: string; status: string; startedAt: string } | null
  readonly lastError: string | null
}

type DeadReason = (run: RunRecord) => string | undefined

/** Where one tenant stands. */
export async function tenantStatus(
  store: LedgerStore,
  t: TenantStatusInput,
  deadReason: DeadReason,
  known: ReadonlySet<string>,
): Promise<TenantStatus> {
  const stats = known.has(t.jobId) ? await store.entityStats(t.jobId) : []
  const runs = known.has(t.jobId) ? await store.listRuns(t.jobId, 20) : []
  // The newest `fleet run` attempt is looked up on its own: a worker's loader leaves a run row each
  // time it starts for new work, and a trickle of deltas would push it out of the newest 20.
  const [fleetRun] = known.has(t.jobId) ? await store.listRuns(t.jobId, 1, ['run', 'delta']) : []
  const sum = (pick: (s: (typeof stats)[number]) => number) => stats.reduce((a, s) => a + pick(s), 0)
  const remaining = sum((s) => s.remaining)
  const perMinute = t.quota.requestsPerMinute * t.quota.itemsPerRequest
  const itemsLastMinute = sum((s) => s.itemsLastMinute)
  // An error older than the tenant's newest finished run (a loader that died, a failed attempt) is stale: not shown.
  const finished = runs.findIndex((r) => r.status === 'succeeded' || r.status === 'rejected')
  const errored = runs.slice(0, finished === -1 ? runs.length : finished).find((r) => r.error !== null && r.error !== '')
  return {
    tenantId: t.tenantId,
    jobId: t.jobId,
    appId: t.appId,
    state: t.unbound !== undefined && fleetRun === undefined ? 'not provisioned' : stateOf(fleetRun, runs, remaining, deadReason),
    entities: ENTITIES.map((entity) => {
      const s = stats.find((x) => x.entity === entity)
      return { entity, done: s?.done ?? 0, skipped: s?.skipped ?? 0, rejected: s?.rejected ?? 0, remaining: s?.remaining ?? 0 }
    }),
    done: sum((s) => s.done),
    remaining,
    rejected: sum((s) => s.rejected),
    itemsLastMinute,
    quotaItemsPerMinute: perMinute,
    rateVsQuota: perMinute > 0 ? itemsLastMinute / perMinute : 0,
    etaSeconds: remaining === 0 || perMinute <= 0 ? null : Math.ceil((remaining / perMinute) * 60),
    lastRun: fleetRun ? { id: fleetRun.id, mode: fleetRun.mode, status: fleetRun.status, startedAt: fleetRun.startedAt.toISOString() } : null,
    lastError: errored?.error ?? t.unbound ?? null,
  }
}

/** A tenant's state: its newest `fleet run` attempt, unless a live loader (a fleet worker) is still at work on it. */
export function stateOf(fleetRun: RunRecord | undefined, runs: readonly RunRecord[], remaining: number, deadReason: DeadReason): TenantLoadState {
  const liveLoader = runs.some((r) => r.status === 'running' && r.mode === 'worker' && deadReason(r) === undefined)
  if (fleetRun === undefined) {
    return liveLoader && remaining > 0 ? 'loading' : 'not started'
  }
  if (fleetRun.status === 'running') {
    if (deadReason(fleetRun) !== undefined) {
      return liveLoader && remaining > 0 ? 'loading' : 'interrupted'
    }
    return hasPlan(fleetRun.stats) ? 'loading' : 'planning'
  }
  if (fleetRun.status === 'succeeded') {
    return 'done'
  }
  if (fleetRun.status === 'rejected') {
    return 'rejected'
  }
  if (fleetRun.status === 'failed') {
    return 'failed'
  }
  return liveLoader && remaining > 0 ? 'loading' : 'interrupted'
}

function hasPlan(stats: unknown): boolean {
  return stats !== null && typeof stats === 'object' && 'plan' in stats
}

const n = (v: number) => v.toLocaleString('en-US')

/** One line per tenant (state, per entity done/remaining, rate vs quota, ETA, rejects, last error) and a totals line. */
export function formatFleetStatus(lines: readonly TenantStatus[]): string {
  const width = Math.max(6, ...lines.map((l) => l.tenantId.length))
  const out = lines.map((l) => {
    const perEntity = l.entities.map((e) => `${e.entity} ${n(e.done)}/${n(e.remaining)}`).join(' ')
    const eta = l.etaSeconds === null ? '-' : formatDuration(l.etaSeconds)
    const error = l.lastError ? `  last error: ${l.lastError}` : ''
    return `${l.tenantId.padEnd(width)}  ${l.state.padEnd(11)}  ${perEntity}  rate ${(l.rateVsQuota * 100).toFixed(0)}% of ${n(l.quotaItemsPerMinute)}/min  ETA ${eta}  rejects ${n(l.rejected)}${error}`
  })
  const count = (s: TenantLoadState) => lines.filter((l) => l.state === s).length
  const states = TENANT_LOAD_STATES.filter((s) => count(s) > 0).map((s) => `${count(s)} ${s}`)
  const total = (pick: (l: TenantStatus) => number) => n(lines.reduce((a, l) => a + pick(l), 0))
  return [
    'tenant'.padEnd(width) + '  state        done/remaining per entity',
    ...out,
    `fleet: ${lines.length} tenants (${states.join(', ')}); done ${total((l) => l.done)}, remaining ${total((l) => l.remaining)}, rejects ${total((l) => l.rejected)}, ${total((l) => l.itemsLastMinute)} items in the last minute`,
  ].join('\n')
}
