/**
 * The loader for a job (`chatferry load`, `worker`, `run`, the demo): the platform client from the
 * job's target, the loader with the job's quota and settings. The commands
 * (src/cli/run-loader-command.ts) add the signals, the progress drawing and the exit code.
 */
import type { Logger } from 'pino'

import { type LoaderCounters, type LoadOutcome, runLoader } from '../load/loader.ts'
import { createPlatformClient } from '../target/client.ts'
import type { LedgerContext } from './ledger-context.ts'

export interface RunJobLoaderOptions {
  readonly mode: 'load' | 'worker'
  readonly logger: Logger
  /** Stops the loader: no new batches; the batches in flight finish. */
  readonly signal: AbortSignal
  /** Called about once a second with the process's counters (the commands redraw their progress). */
  readonly onTick?: (counters: LoaderCounters) => void
}

/** Runs the loader for an open ledger context until the job is drained, stopped or fails. */
export async function runJobLoader(ctx: LedgerContext, options: RunJobLoaderOptions): Promise<LoadOutcome> {
  const { config } = ctx
  const client = createPlatformClient({ baseUrl: config.target.baseUrl, apiKey: config.target.apiKey, timeoutMs: config.target.timeoutMs })
  return runLoader({
    store: ctx.store,
    ...(config.state.url !== undefined ? { stateUrl: config.state.url } : {}),
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
    logger: options.logger,
    mode: options.mode,
    signal: options.signal,
    ...(options.onTick ? { onTick: options.onTick } : {}),
  })
}
