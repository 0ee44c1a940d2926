/**
 * Who watches the platform requests of this process: every request the HTTP layer (http.ts) sends
 * is reported, once it is answered or has failed, to the observers registered here — the metrics
 * endpoint counts them by endpoint (the operation, `data_import.messages`, `chat.updateMessage`…)
 * and outcome. Process-wide, since every lane (imports, updates, read-backs) builds its own
 * client; an observer only ever sees the operation, the outcome, the status and the time taken,
 * never a URL, a header or a body.
 */
import { PlatformError } from './errors.ts'

/** What became of one request, in the words a dashboard groups by. */
export const REQUEST_OUTCOMES = [
  'ok',
  'rate_limited',
  'client_error',
  'server_error',
  'timeout',
  'network',
  'invalid_response',
  'refused',
  'aborted',
] as const
export type RequestOutcome = (typeof REQUEST_OUTCOMES)[number]

export interface ObservedRequest {
  /** e.g. `data_import.messages`, `chat.listMessages`, `management.createApp`. */
  readonly operation: string
  readonly outcome: RequestOutcome
  /** Seconds from sending to the answer (or the failure). */
  readonly seconds: number
}

export type RequestObserver = (request: ObservedRequest) => void

const observers = new Set<RequestObserver>()

/** Registers `observer` for every platform request this process sends; returns its removal. */
export function observePlatformRequests(observer: RequestObserver): () => void {
  observers.add(observer)
  return () => void observers.delete(observer)
}

/** Whether anyone watches: the HTTP layer skips the clock when nobody does. */
export function requestsObserved(): boolean {
  return observers.size > 0
}

/** Tells every observer about one request; an observer that throws is ignored (it never fails a request). */
export function reportPlatformRequest(request: ObservedRequest): void {
  for (const observe of observers) {
    try {
      observe(request)
    } catch {
      // An observer's failure is its own.
    }
  }
}

/** The outcome a request that threw `err` had. */
export function outcomeOfError(err: unknown): RequestOutcome {
  if (!(err instanceof PlatformError)) {
    return 'aborted'
  }
  switch (err.kind) {
    case 'http':
      return err.status === 429 ? 'rate_limited' : (err.status ?? 0) >= 500 ? 'server_error' : 'client_error'
    case 'invalid-response':
      return 'invalid_response'
    default:
      return err.kind
  }
}
