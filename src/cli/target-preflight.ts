/**
 * Before `run` reads the source, and before `load`/`worker` take a batch: does the platform take
 * the API key for the app (src/job/check-target-access.ts)? A refusal ends the command with exit 2
 * and the configuration key to fix; a platform that does not answer is only a warning (extraction
 * needs no platform; the loader waits out an outage by its own rule) — unless nothing of the job was
 * ever loaded and no answer came at all (DNS, connection, timeout): then a wrong target.baseUrl or
 * network is far likelier than an outage, and waiting it out would take the loader's 10 minutes.
 */
import type { Logger } from 'pino'

import { checkTargetAccess, type TargetAccess } from '../job/check-target-access.ts'
import type { LedgerContext } from '../job/ledger-context.ts'
import { CliError } from './cli-error.ts'
import { EXIT } from './exit-codes.ts'

export async function requireTargetAccess(
  ctx: Pick<LedgerContext, 'config' | 'jobId' | 'store'>,
  logger: Logger,
  signal?: AbortSignal,
): Promise<void> {
  await judgeTargetAccess(ctx, await checkTargetAccess(ctx.config, signal ? { signal } : {}), logger)
}

/** The command's judgement of the pre-flight's answer: throws exit 2 on a refusal, warns when the platform did not answer. */
export async function judgeTargetAccess(
  ctx: Pick<LedgerContext, 'config' | 'jobId' | 'store'>,
  access: TargetAccess,
  logger: Logger,
): Promise<undefined> {
  if (access.status === 'refused') {
    throw new CliError(`${access.message}; ${access.fix} in ${ctx.config.file} (nothing was read or sent)`, EXIT.USAGE)
  }
  if (access.status === 'unavailable' && !access.answered && !(await anythingLoaded(ctx))) {
    throw new CliError(
      `${access.message}; nothing of job ${ctx.jobId} was ever loaded, so this is not waited out as an outage: ` +
        `check target.baseUrl in ${ctx.config.file} and this machine's network and DNS, then run again (nothing was read or sent)`,
      EXIT.USAGE,
    )
  }
  if (access.status === 'unavailable') {
    logger.warn(`${access.message}; going on (the loader waits for the platform)`)
  }
  return undefined
}

/** Whether any item of the job was ever sent or settled done (a job the ledger does not hold yet: no). */
async function anythingLoaded(ctx: Pick<LedgerContext, 'jobId' | 'store'>): Promise<boolean> {
  const stats = await ctx.store.entityStats(ctx.jobId)
  return stats.some((s) => s.done > 0 || s.sent > 0 || s.requests > 0)
}
