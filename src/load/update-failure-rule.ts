/**
 * What a failed chat call means for an update (pure; table-tested in test/unit/load/update-lane-rules.test.ts):
 *
 * - `stop`: nothing can succeed — the key or the app is refused (401, or 403 with an `AUTH_ERR_*` /
 *   `ERR_APP_ARCHIVED` code), a redirect, an insecure URL. The run stops (exit 2 for a refused key).
 * - `reject`: a definite answer about this update — any other 4xx with the platform's code
 *   (`ERR_UID_NOT_FOUND`, `ERR_ROLE_NOT_FOUND`, 403 `ERR_MESSAGE_NOT_A_SENDER`, …): the update is
 *   rejected with it (after a check that the platform does not hold the state anyway) and the run
 *   goes on. Unlike a data-import batch, a chat write names one item, so a 404 with a code is about
 *   that item, not about the URL.
 * - `retry`: transient — 408, 5xx, timeouts, lost connections, malformed answers (a 429 never gets
 *   here: the chat budget pauses and the call goes again).
 */
import type { FailureKind } from '../target/errors.ts'

export type UpdateFailureVerdict = 'stop' | 'reject' | 'retry'

/** 403 codes that refuse the credentials or the app, not the update. */
function refusesCredentials(code: string): boolean {
  return code.startsWith('AUTH_ERR') || code === 'ERR_APP_ARCHIVED'
}

export function judgeUpdateFailure(f: { kind: FailureKind; status: number | undefined; code: string; retryable: boolean }): UpdateFailureVerdict {
  if (f.kind === 'refused') {
    return 'stop'
  }
  if (f.retryable) {
    return 'retry'
  }
  if (f.kind !== 'http' || f.status === undefined || f.status < 400 || f.status === 401) {
    return 'stop'
  }
  if (f.status === 403 && refusesCredentials(f.code)) {
    return 'stop'
  }
  return 'reject'
}
