import type { Command } from 'commander'

import { formatDuration } from '../../format-duration.ts'
import type { CutoverRecord } from '../../job/final-delta.ts'
import { deadRunReason } from '../../job/run-liveness.ts'
import type { RunRecord } from '../../state/store.ts'
import { withHelp } from '../help.ts'
import { requireKnownJob } from '../job-guard.ts'
import { openReadContext } from '../ledger-read-context.ts'
import { configOption } from '../options.ts'
import { JOB_OPTION_HELP } from './load.ts'

/** One run as `runs` shows it. */
export interface RunView {
  readonly id: number
  readonly mode: string
  /** The ledger's status, except `interrupted` for a `running` row whose process died. */
  readonly status: string
  /** Why a `running` row counts as dead, when it does. */
  readonly died: string | null
  readonly owner: string | null
  readonly startedAt: string
  /** When it ended (null while running; the last heartbeat of a dead run is in `heartbeatAt`). */
  readonly finishedAt: string | null
  readonly heartbeatAt: string
  /** Until its end, its last heartbeat if it died, or now while it runs. */
  readonly durationMs: number
  /**
   * What it did, from the stats it recorded: source rows read and new items (a `run`'s planning);
   * requests, items done, rejected, 429s (loading); chat requests and updates done, rejected,
   * reported, held back (a `run`'s update lane).
   */
  readonly counts: Record<string, number>
  /** True for a `run --delta --final` (the cutover's last delta). */
  readonly final: boolean
  /** A final delta's cutover record: when its read began, and the source rows changed after it once checked (src/job/final-delta.ts). */
  readonly cutover: CutoverRecord | null
  readonly error: string | null
}

const numberAt = (o: unknown, key: string): number | undefined => {
  const v = o !== null && typeof o === 'object' ? (o as Record<string, unknown>)[key] : undefined
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined
}

/** The counts a run row's stats hold: the loader's counters, and the plan summary of a `run` (src/job/run-row.ts writes them). */
export function runCounts(stats: unknown): Record<string, number> {
  const out: Record<string, number> = {}
  // The loader's counters are under `counters` (older rows, written by a loader's heartbeat, hold them at the top).
  const counters = stats !== null && typeof stats === 'object' && 'counters' in stats ? (stats as { counters: unknown }).counters : stats
  for (const key of ['requests', 'itemsDone', 'itemsRejected', 'rateLimited'] as const) {
    const v = numberAt(counters, key)
    if (v !== undefined) {
      out[key] = v
    }
  }
  // `files.rewriteTextLinks`: shown only when it did something.
  for (const key of ['textLinksRewritten', 'textLinksOverLimit'] as const) {
    const v = numberAt(counters, key)
    if (v !== undefined && v > 0) {
      out[key] = v
    }
  }
  const plan = stats !== null && typeof stats === 'object' ? (stats as { plan?: { entities?: Record<string, unknown> } }).plan : undefined
  if (plan?.entities && typeof plan.entities === 'object') {
    let rows = 0
    let inserted = 0
    for (const e of Object.values(plan.entities)) {
      rows += numberAt(e, 'sourceRows') ?? 0
      inserted += numberAt((e as { ledger?: unknown } | null)?.ledger, 'inserted') ?? 0
    }
    out.sourceRows = rows
    out.newItems = inserted
  }
  Object.assign(out, laneCounts(stats))
  return out
}

/** The sum of a per-kind count map (`{ 'message.edit': 2, … }`). */
function total(byKind: unknown): number {
  let n = 0
  for (const v of Object.values(byKind !== null && typeof byKind === 'object' ? byKind : {})) {
    n += typeof v === 'number' && Number.isFinite(v) ? v : 0
  }
  return n
}

/**
 * What a `run`'s update lane did (its counters, `updateLane` in the stats, src/load/update-lane-run.ts):
 * chat requests, and updates applied, rejected, reported instead, held back by the conflict policy;
 * only those that are not 0, so a run whose lane had nothing to do shows no lane counts at all.
 */
function laneCounts(stats: unknown): Record<string, number> {
  const lane = stats !== null && typeof stats === 'object' ? (stats as { updateLane?: Record<string, unknown> }).updateLane : undefined
  if (lane === null || typeof lane !== 'object') {
    return {}
  }
  const counts: Record<string, number> = {
    chatRequests: numberAt(lane, 'requests') ?? 0,
    updatesDone: total(lane.done),
    updatesRejected: total(lane.rejected),
    updatesReported: total(lane.reported),
    updatesHeldBack: total(lane.heldBack),
  }
  return Object.fromEntries(Object.entries(counts).filter(([, n]) => n !== 0))
}

/** The final mark and cutover record a `run --delta --final` writes into its stats. */
export function cutoverOf(stats: unknown): { final: boolean; cutover: CutoverRecord | null } {
  const o = stats !== null && typeof stats === 'object' ? (stats as { final?: unknown; cutover?: unknown }) : {}
  const cutover = o.cutover !== null && typeof o.cutover === 'object' && typeof (o.cutover as { readStartedAt?: unknown }).readStartedAt === 'string'
  return { final: o.final === true, cutover: cutover ? (o.cutover as CutoverRecord) : null }
}

/** `cutover at …` and, once checked, what changed in the source after the read began. */
function cutoverText(v: RunView): string {
  if (v.cutover === null) {
    return ''
  }
  const after =
    v.cutover.changedRows === undefined
      ? 'source not checked yet'
      : v.cutover.sourceStillChanging
        ? `SOURCE STILL CHANGING: ${v.cutover.changedRows} rows changed after the read`
        : 'source frozen'
  return `\tcutover at ${v.cutover.readStartedAt} (${after})`
}

export function runView(r: RunRecord, now = Date.now()): RunView {
  const died = deadRunReason(r, now) ?? null
  const end = r.finishedAt?.getTime() ?? (died !== null ? r.heartbeatAt.getTime() : now)
  return {
    id: r.id,
    mode: r.mode,
    status: died !== null ? 'interrupted' : r.status,
    died,
    owner: r.owner,
    startedAt: r.startedAt.toISOString(),
    finishedAt: r.finishedAt?.toISOString() ?? null,
    heartbeatAt: r.heartbeatAt.toISOString(),
    durationMs: Math.max(0, end - r.startedAt.getTime()),
    counts: runCounts(r.stats),
    ...cutoverOf(r.stats),
    error: r.error,
  }
}

/** `chatferry runs`: a job's runs, newest first. */
export function registerRunsCommand(program: Command): void {
  const runs = program
    .command('runs')
    .summary("a job's runs, newest first: mode, start, end, duration, counts, outcome")
    .description(
      "A job's runs, newest first: mode, start and end, duration, what each did (source rows and new items planned; requests, " +
        'items done and rejected, 429s; chat requests and updates done, rejected, reported, held back), and its outcome. A run whose process died (SIGKILL, a lost machine) shows as ' +
        '`interrupted`. Needs no API key or source password. While a job runs it needs a Postgres ledger (state.url): an embedded store another process holds is refused (exit 1; `status` works meanwhile).',
    )
  withHelp(runs, {
    exits: [
      [0, 'listed'],
      [1, 'the ledger could not be read, or another process holds the embedded store'],
      [2, 'usage or configuration error, unknown job'],
    ],
    examples: [
      ['runs', 'the runs of the job of ./chatferry.yaml'],
      ['runs --job acme-chat --limit 100 --json', 'the last 100 runs of another job, as one JSON array'],
    ],
  })
  runs
    .addOption(configOption())
    .option('--job <id>', JOB_OPTION_HELP)
    .option(
      '--limit <n>',
      'at most this many runs',
      (v) => {
        const n = Number(v)
        if (!Number.isInteger(n) || n < 1) {
          throw new Error(`--limit must be a positive integer, got ${v}`)
        }
        return n
      },
      20,
    )
    .option('--json', 'print JSON (one array, newest first)')
    .action(async (opts: { config: string; job?: string; limit: number; json?: boolean }) => {
      const ctx = await openReadContext({ config: opts.config, ...(opts.job !== undefined ? { job: opts.job } : {}) })
      try {
        await requireKnownJob(ctx)
        const now = Date.now()
        const views = (await ctx.store.listRuns(ctx.jobId, opts.limit)).map((r) => runView(r, now))
        if (opts.json) {
          process.stdout.write(`${JSON.stringify(views, null, 2)}\n`)
          return
        }
        if (views.length === 0) {
          process.stdout.write(`no runs of job ${ctx.jobId} yet\n`)
          return
        }
        process.stdout.write('run\tmode\toutcome\tstarted → ended\tduration\tcounts\n')
        for (const v of views) {
          const counts = Object.entries(v.counts)
            .map(([k, n]) => `${k} ${n}`)
            .join(', ')
          process.stdout.write(
            `#${v.id}\t${v.mode}${v.final ? ' final' : ''}\t${v.status}\t${v.startedAt} → ${v.finishedAt ?? (v.died !== null ? 'died' : 'running')}\t` +
              `${formatDuration(v.durationMs / 1000)}\t${counts}${cutoverText(v)}${v.died !== null ? `\t(${v.died})` : ''}${v.error ? `\t${v.error}` : ''}\n`,
          )
        }
      } finally {
        await ctx.close()
      }
    })
}
