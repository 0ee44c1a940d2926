/**
 * Watches the platform's health as the loader sees it, so that an outage ends the run honestly
 * instead of rejecting items: any run of failures without a success (connection errors, 5xx,
 * timeouts, malformed answers) is one outage. It logs the outage as it happens (warn on the first
 * failure, then a summary at most every `summaryEveryMs`) and says when `load.giveUpAfterMs` has
 * passed, with a give-up message that names the last cause.
 */
import type { Logger } from 'pino'

export interface OutageWatchOptions {
  readonly giveUpAfterMs: number
  readonly logger: Logger
  /** @default 10000 */
  readonly summaryEveryMs?: number
  readonly now?: () => number
}

export interface OutageWatch {
  /** A request was answered (2xx): the outage, if any, is over. */
  success(): void
  /** A request failed transiently; `cause` names why (`connection refused`, `HTTP 503 ERR_…`). */
  failure(cause: string): void
  /** True when failures without a success have gone on for longer than `giveUpAfterMs`. */
  exceeded(): boolean
  /** True when a request was answered successfully after `at` (epoch ms). */
  succeededAfter(at: number): boolean
  /** The error that ends the run when {@link exceeded}. */
  giveUpMessage(): string
}

export function createOutageWatch(options: OutageWatchOptions): OutageWatch {
  const now = options.now ?? Date.now
  const every = options.summaryEveryMs ?? 10_000
  const log = options.logger
  let lastSuccessAt: number | undefined
  let failingSince: number | undefined
  let failures = 0
  let lastCause = ''
  let lastSummaryAt = 0

  const seconds = (ms: number) => Math.round(ms / 100) / 10

  return {
    success() {
      const t = now()
      if (failingSince !== undefined) {
        log.info({ failingForS: seconds(t - failingSince), failures, lastCause }, 'the platform answers again')
      }
      lastSuccessAt = t
      failingSince = undefined
      failures = 0
    },
    failure(cause) {
      const t = now()
      failures++
      lastCause = cause
      if (failingSince === undefined) {
        failingSince = t
        lastSummaryAt = t
        log.warn({ cause, giveUpAfterMs: options.giveUpAfterMs }, `a request to the platform failed (${cause}); retrying`)
      } else if (t - lastSummaryAt >= every) {
        lastSummaryAt = t
        log.warn(
          { failingForS: seconds(t - failingSince), lastCause: cause, failures, giveUpAfterMs: options.giveUpAfterMs },
          `the platform has been failing for ${seconds(t - failingSince)} s: ${failures} failed requests, last cause ${cause}`,
        )
      }
    },
    exceeded() {
      return failingSince !== undefined && now() - failingSince > options.giveUpAfterMs
    },
    succeededAfter(at) {
      return lastSuccessAt !== undefined && lastSuccessAt > at
    },
    giveUpMessage() {
      const forMs = failingSince === undefined ? 0 : now() - failingSince
      return (
        `no request to the platform succeeded for ${seconds(forMs)} s (${failures} failed; last cause: ${lastCause}); ` +
        `giving up after load.giveUpAfterMs = ${options.giveUpAfterMs} ms. Nothing was rejected for this: run the same command again to resume`
      )
    },
  }
}
