/**
 * The loader for a job (`chatferry load`, `worker`, `run`, the demo): the platform client from the
 * job's target, the import loader with the job's quota and settings, then the update lane with the
 * chat budget (`target.chatQuota`). `load` (and `run`) drain the import lane first and then the
 * update lane, so an update never reaches the platform before the item it changes; a `worker`
 * serves both at once (its update lane waits whenever the import lane has work). The job's run
 * (job-run.ts) calls it inside its run row; the commands (src/cli/run-loader-command.ts) add the
 * signals, the progress drawing and the exit code.
 */
import type { Logger } from 'pino'

import type { FilesLaneCounters, FilesLaneOutcome } from '../files/lane/files-lane.ts'
import { createChatBudget } from '../load/chat-budget.ts'
import { quotaTiming } from '../load/config.ts'
import { type LoaderCounters, type LoadOutcome, runLoader } from '../load/loader.ts'
import { runUpdateLane, type UpdateLaneCounters, type UpdateLaneOutcome } from '../load/update-lane.ts'
import { createPlatformClient, type PlatformClient } from '../target/client.ts'
import type { LedgerContext } from './ledger-context.ts'
import { openJobFiles } from './run-job-files.ts'

export interface RunJobLoaderOptions {
  readonly mode: 'load' | 'worker'
  /** The run row the job's run writes (job-run.ts), for the loader's log. */
  readonly runId?: number
  readonly logger: Logger
  /** Stops the loader: no new batches; the batches in flight finish. */
  readonly signal: AbortSignal
  /** Called about once a second with the process's counters (the commands redraw their progress). */
  readonly onTick?: (counters: LoaderCounters) => void
  /** Called about once a second with the update lane's counters while it runs. */
  readonly onUpdatesTick?: (counters: UpdateLaneCounters) => void
  /** Called about once a second with the files lane's counters while it runs (`files.mode: rehost`). */
  readonly onFilesTick?: (counters: FilesLaneCounters) => void
}

/** The import loader's outcome, and the update lane's and the files lane's when they ran. */
export interface JobLoadOutcome extends LoadOutcome {
  readonly updates?: UpdateLaneOutcome
  readonly files?: FilesLaneOutcome
}

/** The run's outcome with the files lane's: a store that failed fails the run (nothing is lost). */
export function withFilesOutcome(outcome: JobLoadOutcome, files: FilesLaneOutcome | undefined): JobLoadOutcome {
  if (files === undefined) {
    return outcome
  }
  if (files.status === 'failed' && outcome.status !== 'failed') {
    return { ...outcome, status: 'failed', files, error: new Error(files.error ?? 'the files lane failed') }
  }
  return { ...outcome, files }
}

/** Runs the update lane of the job (after the import lane in `load`; beside it in `worker`). */
async function runJobUpdateLane(ctx: LedgerContext, client: PlatformClient, options: RunJobLoaderOptions): Promise<UpdateLaneOutcome> {
  const { config } = ctx
  const budget = await createChatBudget(ctx.store.quota, {
    appId: config.target.appId,
    requestsPerMinute: config.target.chatQuota.requestsPerMinute,
    ...quotaTiming(ctx.load),
    maxRetryAfterMs: ctx.load.maxRetryAfterMs,
  })
  return runUpdateLane({
    store: ctx.store,
    jobId: ctx.jobId,
    client,
    budget,
    settings: ctx.load,
    timeoutMs: config.target.timeoutMs,
    legacyMetadataKey: config.policies.legacyMetadata.key,
    conflicts: config.changes.conflicts,
    logger: options.logger,
    mode: options.mode,
    signal: options.signal,
    ...(options.onUpdatesTick ? { onTick: options.onUpdatesTick } : {}),
  })
}

/** The run's outcome from both lanes: the update lane's failure, stop or rejects count too. */
export function combineOutcomes(imports: LoadOutcome, updates: UpdateLaneOutcome | undefined): JobLoadOutcome {
  if (updates === undefined) {
    return imports
  }
  if (imports.status === 'failed' || updates.status === 'done') {
    return { ...imports, updates }
  }
  if (updates.status === 'failed') {
    return { ...imports, status: 'failed', updates, ...(updates.error !== undefined ? { error: updates.error } : {}) }
  }
  if (updates.status === 'stopped' || imports.status === 'stopped') {
    return { ...imports, status: 'stopped', updates }
  }
  return { ...imports, status: 'rejected', updates }
}

/** Runs the loader for an open ledger context until the job is drained, stopped or fails. */
export async function runJobLoader(ctx: LedgerContext, options: RunJobLoaderOptions): Promise<JobLoadOutcome> {
  const { config } = ctx
  const client = createPlatformClient({ baseUrl: config.target.baseUrl, apiKey: config.target.apiKey, timeoutMs: config.target.timeoutMs })
  const imports = (signal: AbortSignal = options.signal) =>
    runLoader({
      store: ctx.store,
      jobId: ctx.jobId,
      appId: config.target.appId,
      client,
      itemsPerRequest: config.target.quota.itemsPerRequest,
      requestsPerMinute: config.target.quota.requestsPerMinute,
      timeoutMs: config.target.timeoutMs,
      settings: ctx.load,
      retention: config.policies.retention,
      legacyMetadataKey: config.policies.legacyMetadata.key,
      chatRequestsPerMinute: config.target.chatQuota.requestsPerMinute,
      rewriteTextLinks: config.files.rewriteTextLinks,
      logger: options.logger,
      mode: options.mode,
      signal,
      ...(options.runId !== undefined ? { runId: options.runId } : {}),
      ...(options.onTick ? { onTick: options.onTick } : {}),
    })
  // The files lane runs beside the import lane (messages wait for their files); a store that
  // fails ends the other lanes, and the run reports it. Its store is checked before anything runs.
  const ended = new AbortController()
  const signal = AbortSignal.any([options.signal, ended.signal])
  const jobFiles = await openJobFiles(ctx, options.logger, signal)
  const files = jobFiles
    ?.run({ mode: options.mode, signal, ...(options.onFilesTick ? { onTick: options.onFilesTick } : {}) })
    .then(
      (outcome) => {
        if (outcome.status === 'failed') {
          ended.abort()
        }
        return outcome
      },
      (err: unknown): FilesLaneOutcome => {
        ended.abort()
        return { status: 'failed', counters: { copied: 0, alreadyStored: 0, bytes: 0, retried: 0, failed: 0, inFlight: 0 }, error: String(err) }
      },
    )
    .finally(() => jobFiles.close())
  const lanes = async (): Promise<JobLoadOutcome> => {
    if (options.mode === 'worker') {
      // Either lane ending (a fatal error, a signal) ends the other: one worker, one fate.
      const [loaded, updated] = await Promise.all([
        imports(signal).finally(() => ended.abort()),
        runJobUpdateLane(ctx, client, { ...options, signal }).finally(() => ended.abort()),
      ])
      return combineOutcomes(loaded, updated)
    }
    const loaded = await imports(signal)
    if (loaded.status !== 'done' && loaded.status !== 'rejected') {
      return loaded
    }
    return combineOutcomes(loaded, await runJobUpdateLane(ctx, client, { ...options, signal }))
  }
  const outcome = await lanes().finally(() => {
    if (options.mode === 'load') {
      // The import lane is drained only when no message waits for a file being copied, so the
      // files lane has nothing left either; stop it when the import lane stopped or failed.
      ended.abort()
    }
  })
  return withFilesOutcome(outcome, await files)
}
