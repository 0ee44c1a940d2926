/**
 * What `run` tells the notification hooks (`notify:` in the configuration) when it ends: the
 * events of src/job/notify/run-events.ts from the ledger's counts, delivered in the background
 * (src/job/notify/notifier.ts); the command waits at most `notify.exitGraceMs` for them before it
 * exits. Never throws: a notification that cannot be built or sent is a warning, not a failed run.
 */
import type { Logger } from 'pino'

import type { LedgerContext } from '../job/ledger-context.ts'
import { createNotifier } from '../job/notify/notifier.ts'
import { runEndNotifications, verifyNotification } from '../job/notify/run-events.ts'
import { secretsOf } from '../job/notify/secrets.ts'

/** The job's rejected items now (undefined when nobody is to be told, to spare the query). */
export async function rejectedNow(ctx: LedgerContext): Promise<number | undefined> {
  if (ctx.config.notify === undefined) {
    return undefined
  }
  return (await ctx.store.entityStats(ctx.jobId)).reduce((a, s) => a + s.rejected, 0)
}

export async function notifyRunEnd(
  ctx: LedgerContext,
  logger: Logger,
  end: {
    command: string
    runId: number
    status: string
    exitCode: number
    startedAt: number
    final: boolean
    error?: string
    rejectedBefore?: number
  },
): Promise<void> {
  const config = ctx.config.notify
  if (config === undefined) {
    return
  }
  const notifier = createNotifier(config, logger, secretsOf(ctx.config))
  try {
    const stats = await ctx.store.entityStats(ctx.jobId)
    for (const n of runEndNotifications({
      command: end.command,
      jobId: ctx.jobId,
      runId: end.runId,
      status: end.status,
      exitCode: end.exitCode,
      durationMs: Date.now() - end.startedAt,
      entities: Object.fromEntries(stats.map((s) => [s.entity, s])),
      ...(end.error !== undefined ? { error: end.error } : {}),
      final: end.final,
      rejectedBefore: end.rejectedBefore ?? 0,
      rejectThreshold: config.rejectThreshold,
    })) {
      notifier.send(n)
    }
  } catch (err) {
    logger.warn(`notifications not sent: the ledger could not be read (${err instanceof Error ? err.message : String(err)})`)
  }
  await notifier.flush()
}

/** `verify` tells the hooks its result (`verify.result`), then waits at most the grace. */
export async function notifyVerify(
  ctx: LedgerContext,
  logger: Logger,
  result: { report: { runId: string; totals: { mismatches: number; unexplained: number } }; passed: boolean; files?: { json: string } | undefined },
): Promise<void> {
  if (ctx.config.notify === undefined) {
    return
  }
  const notifier = createNotifier(ctx.config.notify, logger, secretsOf(ctx.config))
  notifier.send(
    verifyNotification({
      jobId: ctx.jobId,
      runId: result.report.runId,
      passed: result.passed,
      mismatches: result.report.totals.mismatches,
      unexplained: result.report.totals.unexplained,
      ...(result.files ? { reportFile: result.files.json } : {}),
    }),
  )
  await notifier.flush()
}
