/**
 * The files lane of a job (issue 27), run by its loader beside the import lane. Under
 * `files.mode: rehost`, {@link openJobFiles} opens the copier first — the store is checked before
 * any download or request, so wrong store credentials are a configuration error — and its `run`
 * copies the job's planned files until none is left (`load`) or it is stopped (`worker`). Under
 * another mode it only settles files a `rehost` plan left planned as skipped, so no message waits
 * for them.
 */
import type { Logger } from 'pino'

import type { FilesLaneCounters, FilesLaneOutcome } from '../files/lane/files-lane.ts'
import { runFilesLane } from '../files/lane/files-lane.ts'
import { type CopierOptions, openFileCopier } from '../files/lane/open-file-copier.ts'
import type { LedgerContext } from './ledger-context.ts'

export interface JobFilesRunOptions {
  readonly mode: 'load' | 'worker'
  readonly signal: AbortSignal
  readonly onTick?: (counters: FilesLaneCounters) => void
}

/** An opened files lane: run it once, close it after. */
export interface JobFiles {
  run(options: JobFilesRunOptions): Promise<FilesLaneOutcome>
  close(): Promise<void>
}

/** Opens the job's files lane; undefined when `files.mode` is not `rehost` (after skipping files left planned). */
export async function openJobFiles(
  ctx: LedgerContext,
  logger: Logger,
  signal: AbortSignal,
  copierExtras: Pick<CopierOptions, 'localPublicBaseUrl' | 'readers'> = {},
): Promise<JobFiles | undefined> {
  const settings = ctx.config.files
  if (settings.mode !== 'rehost') {
    const { skipped } = await ctx.store.files.prepare(ctx.jobId, settings)
    if (skipped > 0) {
      logger.info({ files: skipped, mode: settings.mode }, 'files planned for rehosting are skipped under this files.mode')
    }
    return undefined
  }
  const copier = await openFileCopier({ files: settings, stateDir: ctx.config.state.dir }, { logger, signal, ...copierExtras })
  return {
    run: (options) =>
      runFilesLane({
        store: ctx.store,
        jobId: ctx.jobId,
        settings,
        copy: copier.copy,
        mode: options.mode,
        logger,
        signal: options.signal,
        ...(options.onTick ? { onTick: options.onTick } : {}),
      }),
    close: () => copier.close(),
  }
}
