/**
 * `chatferry plan`: the dry run from the configured source, the report (JSON, HTML, terminal), the
 * pre-flight against the target when asked, the diff against the previous plan of the job, and the
 * CI gates. Writes nothing but the report row (`chatferry.reports`) and the report files.
 */
import { type LoadConfig, quotaTiming } from '../load/config.ts'
import { type DryRunOptions, dryRunPlan } from '../plan/dry-run.ts'
import { evaluateGates, type GateSpec } from '../report/fail-on.ts'
import { filesPlan } from '../report/files-plan.ts'
import { renderPlanHtml } from '../report/html.ts'
import { latestReport, newRunId, reportHeader, saveReport, writeReportFiles } from '../report/meta.ts'
import { buildPlanReport } from '../report/plan-report.ts'
import { PlanReport } from '../report/schema.ts'
import { checkTarget } from '../report/target-check.ts'
import { formatPlanReport } from '../report/terminal.ts'
import type { LedgerStore } from '../state/store.ts'
import { checkAttachmentUrls } from './check-attachment-urls.ts'
import type { ResolvedConfig } from './config.ts'
import { openSource } from './open-source.ts'
import { jobReaderIds } from './source-file-readers.ts'

/**
 * What `plan` needs of the ledger: the dry run's read-only session, the reports, and the app's
 * shared chat budget (`--check-target`'s chat reads draw from it with every other process). A
 * job's store is one.
 */
export type PlanLedger = Pick<LedgerStore, 'dryRun' | 'reports' | 'quota'> & Partial<Pick<LedgerStore, 'entityStats'>>

/** The job `plan` reports on: its configuration, its id, its ledger. */
export interface PlanContext {
  readonly config: ResolvedConfig
  readonly jobId: string
  readonly store: PlanLedger
  /** The resolved `load:` settings: the pre-flight's chat calls cut their slots as the loader's do. */
  readonly load?: Pick<LoadConfig, 'quotaWindowMs' | 'quotaGuardMs'>
}

export interface RunPlanOptions {
  /** Directory of the JSON and HTML files; none written when absent. */
  readonly outDir?: string
  readonly gates?: readonly GateSpec[]
  readonly checkTarget?: boolean
  /** Chat reads per minute of the pre-flight. */
  readonly chatRequestsPerMinute?: number
  /** The run's clock (retention, joinedAt, the estimate). @default Date.now() */
  readonly now?: number
  readonly signal?: AbortSignal
  /** Called after every page read, for progress. */
  readonly onPage?: DryRunOptions['onPage']
  /** Also compare the messages' keys with the ledger (a keys-only scan of the messages table). */
  readonly detectDeletes?: boolean
}

export interface RunPlanResult {
  readonly report: PlanReport
  readonly text: string
  readonly files: { json: string; html: string } | undefined
  /** True when every gate passed (and the pre-flight found no problem, when asked). */
  readonly passed: boolean
}

export async function runPlan(ctx: PlanContext, options: RunPlanOptions = {}): Promise<RunPlanResult> {
  const { config } = ctx
  const startedAt = Date.now()
  const now = options.now ?? startedAt
  const runId = newRunId('plan')
  const source = await openSource(config, 'plan from a legacy database')
  const previous = await latestReport<PlanReport>(ctx.store, ctx.jobId, 'plan')
  const previousSnapshot = previous?.sourceSnapshotAt ? Date.parse(previous.sourceSnapshotAt) : undefined

  const result = await source.read((session) =>
    dryRunPlan({
      jobId: ctx.jobId,
      store: ctx.store,
      session,
      policies: config.policies,
      files: { mode: config.files.mode, maxBytes: config.files.maxBytes },
      now,
      pageSize: source.pageSize,
      memberLimits: config.target.limits,
      collectKeys: options.checkTarget === true,
      changes: config.changes,
      detectDeletes: options.detectDeletes === true,
      ...(previousSnapshot !== undefined ? { changedSince: previousSnapshot } : {}),
      ...(source.adjust ? { adjust: source.adjust } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.onPage ? { onPage: options.onPage } : {}),
    }),
  )
  const target =
    options.checkTarget && result.toSend
      ? await checkTarget({
          config,
          quota: ctx.store.quota,
          toSend: result.toSend,
          ...(ctx.load !== undefined ? { timing: quotaTiming(ctx.load) } : {}),
          ...(options.chatRequestsPerMinute !== undefined ? { requestsPerMinute: options.chatRequestsPerMinute } : {}),
          ...(options.signal ? { signal: options.signal } : {}),
        })
      : null
  const header = reportHeader({ config, jobId: ctx.jobId, runId, snapshotAt: result.summary.snapshotAt, startedAt })
  const inventory = result.summary.files
  const filesSection =
    inventory === undefined
      ? undefined
      : filesPlan(
          inventory,
          config.files,
          config.files.mode === 'reference' && inventory.sample.length > 0
            ? await checkAttachmentUrls(
                inventory.sample.map((f) => f.url),
                options.signal,
              )
            : null,
          config.files.mode === 'rehost' ? await jobReaderIds(config.source) : undefined,
        )
  const report = buildPlanReport({
    header,
    config,
    result,
    previous: previous ? upgrade(previous) : undefined,
    target,
    now,
    ...(filesSection !== undefined ? { files: filesSection } : {}),
  })
  const accepted = ctx.store.entityStats ? acceptedRejectsOf(await ctx.store.entityStats(ctx.jobId)) : undefined
  if (accepted !== undefined) {
    report.acceptedRejects = accepted
  }
  report.gates = evaluateGates(report, options.gates ?? [])
  report.durationMs = Date.now() - startedAt
  PlanReport.parse(report)
  await saveReport(ctx.store, 'plan', report)
  const files = options.outDir ? writeReportFiles(options.outDir, 'plan', runId, report, renderPlanHtml(report)) : undefined
  const passed = report.gates.every((g) => g.passed) && (target === null || target.ok)
  return { report, text: formatPlanReport(report), files, passed }
}

/** The rejects an operator accepted (the ledger's), per entity; undefined when none. */
function acceptedRejectsOf(stats: readonly { entity: string; accepted: number }[]): PlanReport['acceptedRejects'] {
  const entities = { users: 0, groups: 0, members: 0, messages: 0 }
  for (const s of stats) {
    if (s.entity in entities) {
      entities[s.entity as keyof typeof entities] += s.accepted
    }
  }
  return Object.values(entities).some((v) => v > 0) ? { entities, command: 'chatferry rejects --accepted' } : undefined
}

/** A previous report of another schema version cannot be diffed field by field: ignore it. */
function upgrade(previous: PlanReport): PlanReport | undefined {
  const parsed = PlanReport.safeParse(previous)
  return parsed.success ? parsed.data : undefined
}
