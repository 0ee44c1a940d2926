/**
 * `chatferry verify`: reconciles the platform's contents with the ledger and the source, through
 * the chat interface's list endpoints only (paced below the chat rate limit):
 *
 * - users, groups and members per group (banned ones included) are listed in full and compared id
 *   by id with the items the ledger marks done;
 * - messages are counted per conversation in one pass over the message list; a deterministic
 *   sample of the ledger's done messages is compared field by field (sender, receiver, sentAt,
 *   text); conversations whose counts differ are listed again to name each missing or unexpected
 *   message. The published message list carries no `muid`: messages are matched with ledger items
 *   by the legacy id chatferry writes into `data.metadata`, else by sender, receiver, sentAt and
 *   text (`src/target/message-match.ts`), and sampled messages nothing matched are reported as mismatches;
 * - the source's row count per entity is compared with the records the ledger accounts for.
 *
 * Every mismatch names its target key and legacy id. A mismatch the ledger explains (an item not
 * loaded yet, a source change after loading) is listed as explained; any other fails the run.
 *
 * The steps, in this order: `reconcile-entities.ts` (id by id), `count-messages.ts` (per
 * conversation, with `message-sample.ts` field by field), `drill-conversations.ts` (message by
 * message where counts differ), `compare-source-counts.ts`; the ledger is read through
 * `store.verifyLookups` (`src/state/verify-lookups.ts`).
 */
import type { SourceConfig } from '../../connectors/index.ts'
import { createChatBudget } from '../load/chat-budget.ts'
import type { LegacyEntity } from '../model/index.ts'
import { createPlatformClient, type PlatformClient } from '../target/client.ts'
import { actualVsPlan, plannedSince } from './actual-vs-plan.ts'
import { compareSourceCounts } from './compare-source-counts.ts'
import { countMessages, type MessageCounts, reportCountDifferences } from './count-messages.ts'
import { drillConversations, MAX_DRILLED_CONVERSATIONS } from './drill-conversations.ts'
import { renderVerifyHtml } from './html.ts'
import { COMPARED_FIELDS, unmatchedSample } from './message-sample.ts'
import { type HeaderInput, latestReport, newRunId, reportHeader, saveReport, writeReportFiles } from './meta.ts'
import { createMismatchList, type MismatchList } from './mismatch-list.ts'
import { reconcileEntities } from './reconcile-entities.ts'
import { applyReplan, createReplanList } from './replan-missing.ts'
import type { ReportContext as LedgerContext } from './report-context.ts'
import { type PlanReport, VerifyReport } from './schema.ts'
import { formatVerifyReport } from './terminal.ts'
import { verifyFiles } from './verify-files.ts'
import { emptyVerifyEntities, JOB_ADVICE, type VerifyAdvice, type VerifyRun } from './verify-run.ts'

export { MAX_DRILLED_CONVERSATIONS } from './drill-conversations.ts'
export { conversationOf } from './message-list.ts'
export { COMPARED_FIELDS } from './message-sample.ts'
export { MAX_LISTED_MISMATCHES } from './mismatch-list.ts'

/** Copied files hashed unless `fileSample` says otherwise. */
export const DEFAULT_FILE_SAMPLE = 100

/** Messages compared field by field unless `--sample` says otherwise. */
export const DEFAULT_SAMPLE = 1000

export interface VerifyOptions {
  /** Messages compared field by field. @default 1000 */
  readonly sample?: number
  /** Chat reads per minute. @default target.chatQuota.requestsPerMinute */
  readonly chatRequestsPerMinute?: number
  /**
   * The window the chat quota is spread over and the slots' guard (`load.quotaWindowMs`,
   * `load.quotaGuardMs`: `quotaTiming`, as the loader's chat calls use them). @default a minute, the budget's guard
   */
  readonly chatTiming?: { readonly windowMs: number; readonly guardMs?: number }
  /** Compare with the source's row counts (needs `source` in the config). @default true when configured */
  readonly source?: boolean
  readonly outDir?: string
  readonly client?: PlatformClient
  readonly signal?: AbortSignal
  /** Copied files downloaded and hashed against their recorded SHA-256. @default 100 */
  readonly fileSample?: number
  /** The commands the notes advise. @default a single job's (JOB_ADVICE) */
  readonly advice?: VerifyAdvice
  /** Plan again what the ledger calls loaded and the platform lacks (`replan-missing.ts`). @default false */
  readonly replan?: boolean
}

export interface VerifyResult {
  readonly report: VerifyReport
  readonly text: string
  readonly files: { json: string; html: string } | undefined
  readonly passed: boolean
}

export async function runVerify(ctx: LedgerContext, options: VerifyOptions = {}): Promise<VerifyResult> {
  const { config, store, jobId } = ctx
  const startedAt = Date.now()
  const runId = newRunId('verify')
  const t = config.target
  const client = options.client ?? createPlatformClient({ baseUrl: t.baseUrl, apiKey: t.apiKey, timeoutMs: t.timeoutMs })
  const sampleSize = options.sample ?? DEFAULT_SAMPLE
  const mismatches = createMismatchList()
  const run: VerifyRun = {
    jobId,
    advice: options.advice ?? JOB_ADVICE,
    replan: createReplanList(options.replan === true),
    lookups: store.verifyLookups,
    client,
    pacer: await createChatBudget(store.quota, {
      appId: t.appId,
      requestsPerMinute: options.chatRequestsPerMinute ?? t.chatQuota.requestsPerMinute,
      ...options.chatTiming,
    }),
    signal: options.signal,
    legacyMetadataKey: config.policies.legacyMetadata.key,
    rewriteTextLinks: config.files?.rewriteTextLinks === true,
    entities: emptyVerifyEntities(),
    add: mismatches.add,
  }

  for (const r of await run.lookups.openItems(jobId)) {
    run.entities[r.entity as LegacyEntity].ledgerOpen = r.n
  }
  await reconcileEntities(run)
  const messages = await countMessages(run, sampleSize)
  const drilled = await drillConversations(run, messages.toRelist)
  reportCountDifferences(run, messages.countDiffs, drilled.conversations)
  const sampleUnmatched = reportUnmatchedSample(run, messages, drilled.missing)
  const snapshotAt =
    config.source !== undefined && options.source !== false
      ? await compareSourceCounts(run, config.source as SourceConfig, await lastCutoverAt(store, jobId))
      : undefined

  const report = buildVerifyReport({ config, jobId, runId, snapshotAt, startedAt }, run, messages, sampleSize, sampleUnmatched, mismatches)
  const stats = await store.entityStats(jobId)
  const plan = await latestReport<PlanReport>(store, jobId, 'plan')
  report.actualVsPlan = actualVsPlan(plan, stats, run.entities, plannedSince(plan, await store.listRuns(jobId, 10_000, ['delta'])))
  const accepted = acceptedRejectsOf(stats, run.advice)
  if (accepted !== undefined) {
    report.acceptedRejects = accepted
  }
  const files = await verifyFiles(store, jobId, options.fileSample ?? DEFAULT_FILE_SAMPLE, options.signal)
  if (files !== undefined) {
    report.files = files
  }
  if (run.replan.enabled) {
    report.replanned = { ...(await applyReplan(store, jobId, run.replan)), command: run.advice.load }
  }
  VerifyReport.parse(report)
  await saveReport(store, 'verify', report)
  const written = options.outDir ? writeReportFiles(options.outDir, 'verify', runId, report, renderVerifyHtml(report)) : undefined
  const filesPassed = (report.files?.problems.length ?? 0) === 0
  return { report, text: formatVerifyReport(report), files: written, passed: mismatches.unexplained === 0 && filesPassed }
}

/** The rejects the operator accepted, per entity, and the command that says who, when and why; undefined when none. */
function acceptedRejectsOf(
  stats: readonly { entity: string; accepted: number }[],
  advice: VerifyAdvice,
): NonNullable<VerifyReport['acceptedRejects']> | undefined {
  const entities = { users: 0, groups: 0, members: 0, messages: 0 }
  for (const s of stats) {
    if (s.entity in entities) {
      entities[s.entity as LegacyEntity] += s.accepted
    }
  }
  return Object.values(entities).some((v) => v > 0) ? { entities, command: `${advice.rejects} --accepted` } : undefined
}

/** When the job's last final delta (`run --delta --final`) began its read, if it ran: the cutover verify re-checks. */
async function lastCutoverAt(store: LedgerContext['store'], jobId: string): Promise<number | undefined> {
  for (const r of await store.listRuns(jobId, 100)) {
    const cutover = (r.stats as { final?: unknown; cutover?: { readStartedAt?: unknown } } | null)?.cutover
    if (typeof cutover?.readStartedAt === 'string') {
      return Date.parse(cutover.readStartedAt)
    }
  }
  return undefined
}

/** The report of a finished verify. */
function buildVerifyReport(
  header: HeaderInput,
  run: VerifyRun,
  messages: MessageCounts,
  sampleSize: number,
  sampleUnmatched: number,
  mismatches: MismatchList,
): VerifyReport {
  return {
    ...reportHeader(header),
    kind: 'verify',
    entities: run.entities,
    messages: {
      conversations: messages.conversations,
      conversationsMismatched: messages.mismatched.length,
      conversationsRelisted: Math.min(messages.toRelist.length, MAX_DRILLED_CONVERSATIONS),
      sampleRequested: sampleSize,
      sampleCompared: messages.compared,
      sampleComparedBy: messages.comparedBy,
      sampleUnmatched,
      listedBy: messages.listedBy,
      fields: [...COMPARED_FIELDS],
      idsComparable: true,
    },
    chat: { requests: run.pacer.counters.requests, requestsPerMinute: run.pacer.requestsPerMinute, rateLimited: run.pacer.counters.rateLimited },
    mismatches: mismatches.listed,
    mismatchesNotListed: mismatches.notListed,
    totals: { mismatches: mismatches.total, unexplained: mismatches.unexplained },
  }
}

/**
 * Sampled ledger messages that no listed message matched (by legacy id, else fingerprint) were not
 * compared: each is a `missing` mismatch, unless the drill named it missing already. Returns how many.
 */
function reportUnmatchedSample(run: VerifyRun, messages: MessageCounts, namedMissing: ReadonlySet<string>): number {
  const unmatched = unmatchedSample(messages.sample)
  for (const s of unmatched) {
    if (namedMissing.has(s.targetKey)) {
      continue
    }
    run.entities.messages.missing++
    run.add({
      entity: 'messages',
      kind: 'missing',
      targetKey: s.targetKey,
      legacyId: s.legacyId,
      field: null,
      expected: s.targetKey,
      actual: null,
      explained: false,
      note:
        'sampled, but no listed message carries its legacy id (or, without one, its sender, receiver, sentAt and text): not compared. ' +
        'Not named missing by a conversation listed again, so it was most likely changed on the platform beyond what identifies it (its text edited there, say), ' +
        `or its conversation is beyond the ${MAX_DRILLED_CONVERSATIONS} verify lists again; no chatferry command restores a message changed on the platform: check it there`,
    })
  }
  return unmatched.length
}
