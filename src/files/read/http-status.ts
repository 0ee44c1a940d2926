/**
 * What an HTTP answer that is not the file means for that file: the status mapped to a
 * {@link FileSourceError} cause, and `Retry-After` (seconds or an HTTP date) read into
 * milliseconds. Pure; the `http` reader throws what this returns.
 */
import { FileSourceError } from '../../model/files.ts'

/** `Retry-After` in milliseconds from `now`; undefined when absent or unreadable. */
export function retryAfterMs(header: string | null | undefined, now: number = Date.now()): number | undefined {
  if (header === null || header === undefined || header.trim() === '') {
    return undefined
  }
  const text = header.trim()
  if (/^\d+$/.test(text)) {
    return Number(text) * 1000
  }
  const at = Date.parse(text)
  return Number.isNaN(at) ? undefined : Math.max(0, at - now)
}

/**
 * The failure an HTTP status (not 2xx) means: 404/410 missing; 401/403 denied; 429 rate-limited
 * (retryable, with Retry-After); 408, 5xx unavailable (retryable, with Retry-After when given);
 * any other status unavailable, not retryable (the source answered something we cannot use).
 */
export function statusFailure(status: number, shown: string, retryAfter?: string | null, now?: number): FileSourceError {
  const after = retryAfterMs(retryAfter, now)
  if (status === 404 || status === 410) {
    return new FileSourceError('missing', `${shown}: not at the source (HTTP ${status})`, false)
  }
  if (status === 401 || status === 403) {
    return new FileSourceError('denied', `${shown}: the source refused access (HTTP ${status})`, false)
  }
  if (status === 429) {
    return new FileSourceError('rate-limited', `${shown}: the source asked to slow down (HTTP 429)`, true, after)
  }
  if (status === 408 || status >= 500) {
    return new FileSourceError('unavailable', `${shown}: the source failed (HTTP ${status})`, true, after)
  }
  return new FileSourceError('unavailable', `${shown}: unexpected answer HTTP ${status}`, false)
}
