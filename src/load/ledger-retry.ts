/**
 * A lane loop's ledger operations — claiming, packing, the drained check, taking over a dead
 * holder's leases — ridden through a transient failure of the ledger (a reset connection, a
 * serialization failure, a Postgres restart: ledger-error-kind.ts): each failed attempt is counted
 * (`ledgerErrors`, the metrics' `lane` label) and tried again after the loader's backoff
 * (backoff.ts, p-retry); the streak is logged once when it starts (warn) and once when the ledger
 * answers again (info). A failure that lasts `load.giveUpAfterMs` — the outage an operator lets the
 * loader ride out, for the platform as for the ledger — ends the lane with a {@link FatalLoadError}
 * naming the operation and the last error. A permanent error (a missing table, a permission, a
 * bug, a closed pool) is not tried again: it ends the lane at once with a FatalLoadError naming
 * the operation, counted once. A stop cuts a backoff short (the operation is not tried again) but
 * never an attempt in flight: an answer that arrives is kept.
 *
 * Safe to retry because every such operation is: a claim whose answer was lost may have committed,
 * but then its units are leased to this process with no one working on them, and the next claim
 * skips them (a live lease); they are claimed again, by any process, when that lease ends
 * (`load.leaseSeconds`), with a fresh lease token (batches) or as a `sent` update that is checked
 * before it is sent again (updates) — never held twice. Packing, the drained check and the
 * takeover read or write the same state again.
 */
import pRetry from 'p-retry'
import type { Logger } from 'pino'

import { RETRY_BACKOFF } from './backoff.ts'
import { FatalLoadError } from './fatal-load-error.ts'
import { ledgerErrorKind } from './ledger-error-kind.ts'

export interface LedgerRetryOptions {
  /** `load.giveUpAfterMs`: how long one operation may keep failing before the lane ends. */
  readonly giveUpAfterMs: number
  readonly logger: Logger
  /** The lane's stop: cuts a backoff short. */
  readonly signal: AbortSignal
  /** The lane's counters: each failed attempt counts one. */
  readonly counters: { ledgerErrors: number }
}

/**
 * Runs `op` (what it does: `operation`, e.g. `claiming updates`) until it succeeds: its value;
 * undefined when the lane was stopped meanwhile. Throws a FatalLoadError once it has failed for
 * `giveUpAfterMs`, and at once on a permanent error (ledger-error-kind.ts).
 */
export type LedgerRetry = <T>(operation: string, op: () => Promise<T>) => Promise<{ value: T } | undefined>

export function createLedgerRetry(options: LedgerRetryOptions): LedgerRetry {
  const { giveUpAfterMs, logger, signal, counters } = options
  const seconds = (ms: number) => Math.round(ms / 100) / 10
  return async <T>(operation: string, op: () => Promise<T>): Promise<{ value: T } | undefined> => {
    const startedAt = Date.now()
    let failures = 0
    let answer: { value: T } | undefined
    try {
      await pRetry(
        async () => {
          answer = { value: await op() }
        },
        {
          ...RETRY_BACKOFF,
          retries: Number.POSITIVE_INFINITY,
          maxRetryTime: giveUpAfterMs,
          signal,
          onFailedAttempt: ({ error }) => {
            counters.ledgerErrors++
            failures++
            if (failures === 1 && ledgerErrorKind(error).transient) {
              logger.warn({ err: error, operation, giveUpAfterMs }, `the ledger failed while ${operation}; retrying`)
            }
          },
          shouldRetry: ({ error }) => ledgerErrorKind(error).transient,
        },
      )
    } catch (err) {
      if (answer === undefined && !signal.aborted) {
        const kind = ledgerErrorKind(err)
        if (!kind.transient) {
          throw new FatalLoadError(
            `the ledger failed while ${operation}, with an error no retry can fix (${kind.code ?? (err as Error).name}): ` +
              `${(err as Error).message}. Nothing was lost`,
            { cause: err },
          )
        }
        const failingMs = Date.now() - startedAt
        throw new FatalLoadError(
          `the ledger kept failing while ${operation}: ${failures} attempts in ${seconds(failingMs)} s, the last: ` +
            `${(err as Error).message}; gave up after load.giveUpAfterMs = ${giveUpAfterMs} ms. Nothing was lost`,
          { cause: err },
        )
      }
    }
    if (answer !== undefined && failures > 0) {
      logger.info({ operation, failures, failingForS: seconds(Date.now() - startedAt) }, `the ledger answers again (${operation})`)
    }
    return answer
  }
}
