/**
 * Sending one claimed batch: one request per attempt at a quota slot, retried with jittered
 * backoff, then a decision on what to do with the batch (see {@link Settlement}). The stop signal
 * cuts quota waits and backoffs short but never a request in flight. A message request answered
 * with the platform's bad-row 500 is read back before anything else (read-back.ts): the rows found
 * are done, and the others go again arranged to isolate the bad row (isolate-rows.ts); a suspect
 * sent alone that the platform answers with the same 500 is rejected with that answer.
 */
import pRetry, { AbortError } from 'p-retry'

import type { ImportResult } from '../target/client.ts'
import { PlatformError } from '../target/errors.ts'
import { RETRY_BACKOFF } from './backoff.ts'
import { describeCause, judgeFailure } from './failure-rule.ts'
import { FatalLoadError } from './fatal-load-error.ts'
import { isolateRows, type Isolation, ISOLATION_CODE, suspectRejection } from './isolate-rows.ts'
import type { Claim, LoaderRun } from './loader-types.ts'
import { pauseOnRateLimit } from './pause-on-rate-limit.ts'
import { isBadRowAnswer, readBackBatch } from './read-back.ts'

/** What to do with a batch after sending it: settle its answer, split it, isolate its rows after a read-back, or hand it back. */
export type Settlement =
  | { kind: 'results'; result: ImportResult }
  | { kind: 'split'; code: string; message: string }
  | { kind: 'isolate'; isolation: Isolation; code: string }
  | { kind: 'release'; code: string; message: string }

class LeaseExpiringError extends Error {
  constructor() {
    super('the lease ran short before the request could be sent')
    this.name = 'LeaseExpiringError'
  }
}

/**
 * Sends the claim's request with retries, then settles on what to do with it. A request in flight
 * is never cut short: its answer is kept even when p-retry reports the stop instead.
 */
export async function sendBatch(run: LoaderRun, c: Claim): Promise<Settlement> {
  const { settings, log } = run
  let answer: ImportResult | undefined
  // What a read-back after a bad-row 500 decided (read-back.ts, isolate-rows.ts), or the platform's
  // refusal of a suspect sent alone: either ends the retries.
  let decided: Settlement | undefined
  const send = async (): Promise<ImportResult> => {
    try {
      answer = await sendOnce(run, c)
      return answer
    } catch (err) {
      decided = await afterBadRowAnswer(run, c, err)
      if (decided !== undefined) {
        throw new AbortError(err as Error)
      }
      throw err
    }
  }
  try {
    const result = await pRetry(send, {
      ...RETRY_BACKOFF,
      retries: settings.maxAttempts - 1,
      signal: run.stop.signal,
      shouldRetry: ({ error }) => error instanceof PlatformError && error.retryable,
      onFailedAttempt: ({ error, attemptNumber, retriesLeft }) => {
        log.debug({ batch: c.batchId, attemptNumber, retriesLeft, code: (error as PlatformError).code }, 'request failed')
      },
    })
    return { kind: 'results', result }
  } catch (err) {
    if (answer !== undefined) {
      return { kind: 'results', result: answer }
    }
    if (decided !== undefined) {
      return decided
    }
    return afterFailure(run, c, err)
  }
}

/**
 * The platform's 500 `ERR_EXCEPTION` to a message request, before any retry. Several rows: read
 * back; when some landed (the platform writes), or none did while other requests succeed (so it is
 * this request's content), isolate — every row found is done, the rest go again (isolate-rows.ts).
 * A suspect alone (a row isolated so): the platform's word about that row, it is rejected with it.
 * Undefined: the ordinary path (retry, then split or hand back).
 */
async function afterBadRowAnswer(run: LoaderRun, c: Claim, err: unknown): Promise<Settlement | undefined> {
  if (isBadRowAnswer(c, err)) {
    const found = await readBackBatch(run, c)
    if (found === undefined || (found.landed.size === 0 && !healthySince(run, c))) {
      return undefined
    }
    const isolation = isolateRows(found.rows, found.landed)
    if (isolation.alone.length + isolation.together.length + isolation.again.length === 0) {
      return { kind: 'results', result: { status: 500, results: new Map(isolation.landed), missing: [], rateLimit: {} } }
    }
    return { kind: 'isolate', isolation, code: err.code }
  }
  if (isSuspectRefused(c, err)) {
    const item = c.items[0] as Claim['items'][number]
    const results = new Map([[item.key, { ok: false as const, code: err.code, message: suspectRejection(err.message) }]])
    return { kind: 'results', result: { status: 500, results, missing: [], rateLimit: {} } }
  }
  return undefined
}

/** A message row isolated after a failed request (isolate-rows.ts), sent alone and answered 500 `ERR_EXCEPTION`. */
function isSuspectRefused(c: Claim, err: unknown): err is PlatformError {
  return (
    c.entity === 'messages' &&
    c.items.length === 1 &&
    c.parentCode === ISOLATION_CODE &&
    err instanceof PlatformError &&
    err.kind === 'http' &&
    err.status === 500 &&
    err.code === 'ERR_EXCEPTION'
  )
}

/** The platform answered another request successfully since this batch (or the one it was split from) started failing. */
function healthySince(run: LoaderRun, c: Claim): boolean {
  return run.watch.succeededAfter(Math.min(c.firstFailureAt ?? Date.now(), c.parentSplitAt ?? Infinity))
}

/** The batch's last attempt failed: hand it back, split it, or stop the run (failure-rule.ts decides). */
function afterFailure(run: LoaderRun, c: Claim, err: unknown): Settlement {
  if (err instanceof LeaseExpiringError || (err as { cause?: unknown }).cause instanceof LeaseExpiringError) {
    return { kind: 'release', code: 'LEASE_EXPIRING', message: 'the lease ran short before the request could be sent' }
  }
  if (run.stop.signal.aborted) {
    return run.fatal === undefined
      ? { kind: 'release', code: 'STOPPED', message: 'the loader was stopped' }
      : { kind: 'release', code: 'HALTED', message: run.fatal.message }
  }
  if (!(err instanceof PlatformError)) {
    throw err
  }
  const verdict = judgeFailure({
    items: c.items.length,
    kind: err.kind,
    status: err.status,
    retryable: err.retryable,
    healthyMeanwhile: healthySince(run, c),
  })
  if (verdict === 'stop') {
    const why = err.kind === 'http' && err.status !== undefined && err.status >= 400 ? 'the platform refused the request' : 'cannot send'
    throw new FatalLoadError(`${why}: ${err.message}`, { cause: err })
  }
  if (verdict === 'release') {
    return { kind: 'release', code: err.code, message: err.message }
  }
  return { kind: 'split', code: err.code, message: err.message }
}

/** Sends one request for the claim at a quota slot, again after each 429; throws PlatformError otherwise. */
async function sendOnce(run: LoaderRun, c: Claim): Promise<ImportResult> {
  const { counters, watch } = run
  const body = `{${JSON.stringify(c.entity)}:{${c.items.map((i) => `${JSON.stringify(i.key)}:${i.payload}`).join(',')}}}`
  const keys = c.items.map((i) => i.key)
  for (;;) {
    await run.budgetFor(c.entity).take(run.stop.signal)
    // No new request once the run is stopping or the outage has lasted too long.
    if (watch.exceeded()) {
      run.halt(new FatalLoadError(watch.giveUpMessage()))
    }
    run.stop.signal.throwIfAborted()
    if (!(await run.ensureLease(c, run.options.timeoutMs + 2000))) {
      throw new AbortError(new LeaseExpiringError())
    }
    const t0 = Date.now()
    counters.firstRequestAt ??= t0
    c.firstSentAt ??= t0
    c.requests++
    counters.requests++
    try {
      const result = await run.options.client.importRaw(c.entity, keys, body)
      c.lastStatus = result.status
      c.lastLatencyMs = Date.now() - t0
      watch.success()
      return result
    } catch (err) {
      c.lastLatencyMs = Date.now() - t0
      if (!(err instanceof PlatformError)) {
        throw err
      }
      c.lastStatus = err.status
      if (err.status === 429) {
        await pauseOnRateLimit(run, c, err)
        continue
      }
      if (err.retryable) {
        c.firstFailureAt ??= Date.now()
        watch.failure(describeCause(err))
        if (watch.exceeded()) {
          run.halt(new FatalLoadError(watch.giveUpMessage()))
        }
      }
      throw err
    }
  }
}
