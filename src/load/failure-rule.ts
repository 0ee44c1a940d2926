/**
 * What to do with a batch whose request failed for good (retries spent, or a final answer): the
 * one rule that decides whether a failure may reject an item. Only a definite answer about the
 * content may: a per-request refusal (400/413/422) or a 500 for a single item while the platform
 * was seen answering other requests. Everything transient (502/503/504, 408, a 500 with no sign of
 * health, timeouts, lost connections, malformed answers) hands the batch back for later, so an
 * outage never rejects a healthy item; the loader's give-up timer ends an outage instead.
 */
import type { FailureKind, PlatformError } from '../target/errors.ts'

/** Whole-request statuses that point at the content of the batch, not at us or the platform. */
const CONTENT_STATUSES: ReadonlySet<number> = new Set([400, 413, 422])

export interface FailedBatch {
  readonly items: number
  readonly kind: FailureKind
  /** HTTP status of the last answer, when one arrived. */
  readonly status: number | undefined
  readonly retryable: boolean
  /**
   * The platform answered another request successfully after this batch (or the batch it was split
   * from) started failing: evidence that a 500 is about this batch's content, not an outage.
   */
  readonly healthyMeanwhile: boolean
}

/**
 * - `split`: halve the batch to isolate the item that fails it;
 * - `reject`: the single item is refused (its batch's last error becomes its reason);
 * - `release`: hand the batch back untouched, to be sent again (the failure counts toward give-up);
 * - `stop`: nothing can succeed (bad key, wrong URL, a redirect, an insecure transport).
 */
export type FailureVerdict = 'split' | 'reject' | 'release' | 'stop'

/**
 * Splitting on a 500 does not need evidence of health: it rejects nothing, and a lone batch could
 * never gather that evidence otherwise (its good half succeeding is the evidence for the rest).
 */
export function judgeFailure(b: FailedBatch): FailureVerdict {
  if (!b.retryable) {
    if (b.kind === 'http' && b.status !== undefined && CONTENT_STATUSES.has(b.status)) {
      return b.items > 1 ? 'split' : 'reject'
    }
    return 'stop'
  }
  if (b.kind === 'http' && b.status === 500) {
    if (b.items > 1) {
      return 'split'
    }
    return b.healthyMeanwhile ? 'reject' : 'release'
  }
  return 'release'
}

/** The cause of a failure in the words of the give-up message and the outage log. */
export function describeCause(err: PlatformError): string {
  switch (err.kind) {
    case 'http':
      return `HTTP ${err.status ?? '?'} ${err.code}`
    case 'invalid-response':
      return `malformed answer${err.status === undefined ? '' : ` (HTTP ${err.status})`}`
    case 'timeout':
    case 'network':
    case 'refused':
      return errorText(err)
  }
}

/** The PlatformError's own text without the `operation failed: CODE:` prefix. */
function errorText(err: PlatformError): string {
  const prefix = `${err.code}: `
  const at = err.message.indexOf(prefix)
  return at < 0 ? err.message : err.message.slice(at + prefix.length)
}
