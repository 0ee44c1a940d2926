/**
 * The files lane of a job (issue 27), run by its loader beside the import lane. Under
 * `files.mode: rehost`, {@link openJobFiles} makes the source's readers (the connector's
 * `files()` under its id: a file source set wrong is a configuration error naming the field) and
 * opens the copier — the store is checked before any download or request, so wrong store
 * credentials are a configuration error too — and its `run`
 * copies the job's planned files until none is left (`load`) or it is stopped (`worker`). Under
 * another mode it only settles files a `rehost` plan left planned as skipped, so no message waits
 * for them.
 */
import type { Logger } from 'pino'

import type { FilesLaneCounters, FilesLaneOutcome } from '../files/lane/files-lane.ts'
import { runFilesLane } from '../files/lane/files-lane.ts'
import { type CopierOptions, openFileCopier } from '../files/lane/open-file-copier.ts'
import type { LedgerContext } from './ledger-context.ts'
import { sourceFileReaders } from './source-file-readers.ts'

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
    await prepareJobFiles(ctx, logger)
    return undefined
  }
  // The source's readers first (a file source set wrong is a configuration error before the
  // store is asked anything), then the store's check; the copier closes both at the end.
  const readers = { ...sourceFileReaders(ctx.config.source), ...copierExtras.readers }
  const copier = await openFileCopier({ files: settings, stateDir: ctx.config.state.dir }, { logger, signal, ...copierExtras, readers }).catch(
    async (err: unknown) => {
      await Promise.all(Object.values(readers).map((r) => r.close?.())).catch(() => undefined)
      throw err
    },
  )
  // Before any lane starts: the import lane decides which messages wait from these states.
  await prepareJobFiles(ctx, logger).catch(async (err: unknown) => {
    await copier.close().catch(() => undefined)
    throw err
  })
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

/**
 * Readies the job's files for this run before any lane starts: under `rehost` the job's current
 * `files.onFailure` applies to its failed files (`wait` plans them again, `note` and
 * `link-original` release their messages); under another mode files a `rehost` plan left planned
 * are skipped. Done by a lane once it ran, the import lane could read the old states first and
 * end with messages unsent (under `note`) or not waiting (under `wait`).
 */
async function prepareJobFiles(ctx: LedgerContext, logger: Logger): Promise<void> {
  const settings = ctx.config.files
  const { reopened, skipped } = await ctx.store.files.prepare(ctx.jobId, settings)
  if (reopened > 0) {
    const what =
      settings.onFailure === 'wait' ? 'failed files planned again' : `failed files: their messages go as files.onFailure ${settings.onFailure} says`
    logger.info({ files: reopened, onFailure: settings.onFailure }, what)
  }
  if (skipped > 0) {
    logger.info({ files: skipped, mode: settings.mode }, 'files planned for rehosting are skipped under this files.mode')
  }
}
