/**
 * The part of `chatferry load`, `worker` and `run` after the ledger is open: build the client,
 * run the loader with the command's signals (src/cli/signals.ts), show progress, map the outcome
 * to an exit code.
 */
import type { Logger } from 'pino'
import { EXIT } from '../cli/exit-codes.ts'
import { stopOnSignals, type Stopper } from '../cli/signals.ts'
import { createLogger } from '../logger.ts'
import { createPlatformClient } from '../target/client.ts'
import type { LedgerContext } from './context.ts'
import { runLoader, type LoadOutcome } from './loader.ts'
import { buildReport, formatProgressLines } from './progress.ts'

/**
 * Runs the loader for an open ledger context; returns the exit code. `stopper` carries the
 * command's signal wiring (src/cli/signals.ts); without one, the loader installs its own.
 */
export async function runLoaderCommand(
  ctx: LedgerContext,
  mode: 'load' | 'worker',
  logger: Logger = createLogger(),
  stopper?: Stopper,
): Promise<number> {
  const { config } = ctx
  const client = createPlatformClient({ baseUrl: config.target.baseUrl, apiKey: config.target.apiKey, timeoutMs: config.target.timeoutMs })
  const stop = stopper ?? stopOnSignals(logger, 'the batches in flight')
  stop.finishing = 'the batches in flight'

  const quota = { requestsPerMinute: config.target.quota.requestsPerMinute, itemsPerRequest: config.target.quota.itemsPerRequest }
  const tty = process.stderr.isTTY === true
  let drawn = 0
  let lastDraw = 0
  let drawing = false
  const samples: { at: number; done: Map<string, number> }[] = []
  const draw = async () => {
    if (drawing || Date.now() - lastDraw < 2000) return
    drawing = true
    lastDraw = Date.now()
    try {
      const stats = await ctx.store.entityStats(ctx.jobId)
      const now = Date.now()
      samples.push({ at: now, done: new Map(stats.map((s) => [s.entity, s.done + s.rejected + s.skipped])) })
      while (samples.length > 2 && now - (samples[0]?.at ?? now) > 60_000) samples.shift()
      const first = samples[0]
      const rates = new Map<string, number>()
      if (first && now > first.at) {
        for (const s of stats) rates.set(s.entity, (((s.done + s.rejected + s.skipped) - (first.done.get(s.entity) ?? 0)) / (now - first.at)) * 60_000)
      }
      const lines = formatProgressLines(buildReport(stats, quota), rates)
      let out = drawn > 0 ? `\x1b[${drawn}A` : ''
      for (const l of lines) out += `\r\x1b[2K${l}\n`
      process.stderr.write(out)
      drawn = lines.length
    } catch {
      // progress is best effort
    } finally {
      drawing = false
    }
  }

  let outcome: LoadOutcome
  try {
    outcome = await runLoader({
      store: ctx.store,
      ...(config.state.url !== undefined ? { stateUrl: config.state.url } : {}),
      jobId: ctx.jobId,
      appId: config.target.appId,
      client,
      itemsPerRequest: config.target.quota.itemsPerRequest,
      requestsPerMinute: config.target.quota.requestsPerMinute,
      timeoutMs: config.target.timeoutMs,
      settings: ctx.load,
      logger: tty ? logger.child({}, { level: 'warn' }) : logger,
      mode,
      signal: stop.signal,
      ...(tty ? { onTick: () => void draw() } : {}),
    })
  } finally {
    if (stopper === undefined) stop.dispose()
  }
  const rejected = outcome.stats.reduce((a, s) => a + s.rejected, 0)
  if (outcome.status === 'done') {
    logger.info({ jobId: ctx.jobId }, 'every item is done or skipped')
    return EXIT.OK
  }
  if (outcome.status === 'rejected') {
    logger.warn({ jobId: ctx.jobId, rejected }, `finished; ${rejected} item(s) rejected (see: chatferry rejects)`)
    return EXIT.REJECTED
  }
  if (outcome.status === 'stopped') return mode === 'worker' ? EXIT.OK : EXIT.ERROR
  process.stderr.write(`chatferry: ${outcome.error?.message ?? 'the loader stopped'} (run the same command again to resume)\n`)
  return EXIT.ERROR
}
