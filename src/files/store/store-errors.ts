/**
 * The store's two ways of failing, kept apart from a file's failures:
 *
 * - before anything is downloaded, `check()` finds wrong credentials, a missing bucket, a refused
 *   write or an unreachable endpoint: a configuration error (`CONFIG_INVALID`, exit code 2) naming
 *   the store and the cause;
 * - while copying, a store that refuses a write or cannot be reached throws
 *   {@link StoreUnavailableError}: not a failure of the file being copied (its bytes are fine and
 *   stay spooled), so the files lane pauses and tries again later instead of failing files.
 *
 * Messages name the store by its description (bucket, prefix, endpoint without user info), never
 * a credential.
 */
import { ChatferryError } from '../../errors.ts'

export class StoreUnavailableError extends Error {
  override readonly name = 'StoreUnavailableError'
  /** The store's description. */
  readonly store: string
  constructor(store: string, message: string, options?: { cause?: unknown }) {
    super(`the file store ${store} is unavailable: ${message}`, options)
    this.store = store
  }
}

/** The configuration error `check()` throws. */
export function storeConfigError(store: string, message: string): ChatferryError {
  return new ChatferryError('CONFIG_INVALID', `files.store (${store}): ${message}`)
}
