/**
 * Before `run` reads the source, and before `load`/`worker` take a batch: does the platform take
 * the API key for the app (src/job/check-target-access.ts)? A refusal ends the command with exit 2
 * and the configuration key to fix; a platform that does not answer is only a warning (extraction
 * needs no platform; the loader waits out an outage by its own rule).
 */
import type { Logger } from 'pino'

import { checkTargetAccess } from '../job/check-target-access.ts'
import type { LedgerContext } from '../job/ledger-context.ts'
import { CliError } from './cli-error.ts'
import { EXIT } from './exit-codes.ts'

export async function requireTargetAccess(ctx: Pick<LedgerContext, 'config'>, logger: Logger, signal?: AbortSignal): Promise<void> {
  const access = await checkTargetAccess(ctx.config, signal ? { signal } : {})
  if (access.status === 'refused') {
    throw new CliError(`${access.message}; ${access.fix} in ${ctx.config.file} (nothing was read or sent)`, EXIT.USAGE)
  }
  if (access.status === 'unavailable') {
    logger.warn(`${access.message}; going on (the loader waits for the platform)`)
  }
}
