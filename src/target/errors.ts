/**
 * The one error type of the platform client. It names the operation that failed, carries the HTTP
 * status and the platform's error code, and says whether trying again can help. It never carries a
 * secret: no header, no API key, no request body.
 */

/**
 * `refused` is a request this client would not send (an insecure transport): final, like a 4xx.
 */
export const FAILURE_KINDS = ['http', 'network', 'timeout', 'invalid-response', 'refused'] as const
export type FailureKind = (typeof FAILURE_KINDS)[number]

export interface PlatformErrorInit {
  operation: string
  kind: FailureKind
  status?: number
  code: string
  message: string
  devMessage?: string
  details?: unknown
  retryAfterMs?: number
  cause?: unknown
}

/**
 * Whether an answer is worth retrying: 408, 429 and 5xx, and any request that never got an answer.
 * 4xx other than 408/429 is final.
 */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500
}

export class PlatformError extends Error {
  /** e.g. `data_import.messages`, `chat.listUsers`, `management.createApp`. */
  readonly operation: string
  readonly kind: FailureKind
  /** HTTP status, when an answer arrived. */
  readonly status: number | undefined
  /** The platform's error code (`ERR_TOO_MANY_REQUESTS`, …), or `NETWORK_ERROR` / `TIMEOUT` / `INVALID_RESPONSE`. */
  readonly code: string
  readonly devMessage: string | undefined
  readonly details: unknown
  readonly retryable: boolean
  /** How long the platform asked us to wait (Retry-After / X-RateLimit-Reset), in milliseconds. */
  readonly retryAfterMs: number | undefined

  constructor(init: PlatformErrorInit) {
    const status = init.status === undefined ? '' : ` (HTTP ${init.status})`
    super(`${init.operation} failed${status}: ${init.code}: ${init.message}`, { cause: init.cause })
    this.name = 'PlatformError'
    this.operation = init.operation
    this.kind = init.kind
    this.status = init.status
    this.code = init.code
    this.devMessage = init.devMessage
    this.details = init.details
    this.retryAfterMs = init.retryAfterMs
    this.retryable = init.kind === 'refused' ? false : init.kind !== 'http' || init.status === undefined || isRetryableStatus(init.status)
  }
}

/**
 * The code and message of one item's error in a multi-item answer (import results, added
 * members). Its shape is not documented (gap 1): the standard error object, a bare code string, or
 * an object with only a message are all read.
 */
export function itemErrorOf(raw: unknown): { code: string; message: string } {
  if (typeof raw === 'string') {
    return { code: raw, message: raw }
  }
  if (raw !== null && typeof raw === 'object') {
    const o = raw as { code?: unknown; message?: unknown; devMessage?: unknown }
    const code = typeof o.code === 'string' ? o.code : 'ERR_UNKNOWN'
    const message = typeof o.message === 'string' ? o.message : typeof o.devMessage === 'string' ? o.devMessage : code
    return { code, message }
  }
  return { code: 'ERR_UNKNOWN', message: 'the item failed without an error description' }
}
