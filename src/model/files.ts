/**
 * The files of a history (attachments), as connectors name them and as the files lane reads them.
 *
 * A connector puts a {@link FileLocator} on each `LegacyAttachment` it can read the bytes of
 * (`source`); the files lane (`src/files/`) asks that connector's {@link FileReader} for the bytes,
 * checks them, and writes them to the customer's {@link FileStore}. An attachment without a
 * locator is read over HTTP from its `url` (the `http` reader).
 *
 * A locator never holds a credential: a token (Slack's export token, an API key) comes from the
 * configuration or the environment when the reader is made, and never reaches the ledger, a
 * report or a log.
 */
import type { Readable } from 'node:stream'

/** Where an attachment's bytes are at the source. JSON-serialisable; stored in the ledger. */
export interface FileLocator {
  /** The reader that opens it: a connector's id (`mattermost`, `slack-export`, …) or `http`. */
  readonly reader: string
  /** The reader's own key for the file: a path under a data directory, a GridFS id, a URL without credentials. */
  readonly ref: string
  /** What the files lane paces by (its own rate limit and pool per host): a URL's host, `local`, `gridfs`. */
  readonly host: string
}

/** An opened file: its bytes from `start`. */
export interface OpenedFile {
  readonly body: Readable
  /** The whole file's size in bytes when the source says (a stat, a Content-Range/Content-Length). */
  readonly size?: number
  /** The type the source declares (HTTP Content-Type), if any. */
  readonly contentType?: string
  /** The byte `body` starts at: the requested offset when the source honoured it, 0 when it sent the whole file. */
  readonly start: number
}

export interface OpenOptions {
  /** Resume from this byte (HTTP Range, a file read from an offset). @default 0 */
  readonly offset?: number
  readonly signal?: AbortSignal
}

/** Reads files of one source. One per connector (and the shared `http` reader). */
export interface FileReader {
  /** Opens a file; throws {@link FileSourceError} for anything about that file. */
  open(ref: string, options?: OpenOptions): Promise<OpenedFile>
  /** Releases connections, handles; idempotent. */
  close?(): Promise<void>
}

/** Why a file could not be copied. */
export const FILE_FAILURE_CAUSES = [
  /** Not at the source (404, no such path, no GridFS file). */
  'missing',
  /** The source refused (401/403 with credentials that are otherwise good). */
  'denied',
  /** The credential is no longer accepted (an expired or revoked token; its login page served as the file). */
  'expired-credentials',
  /** The source asked to slow down (429) and the retries ran out. */
  'rate-limited',
  /** The source failed or could not be reached (5xx, reset, stalled) and the retries ran out. */
  'unavailable',
  /** Fewer bytes arrived than the source announced. */
  'truncated',
  /** A different size from the one the legacy record states. */
  'size-mismatch',
  /** An HTML page where a file of another type was expected. */
  'html-instead-of-file',
  /** The bytes are not of the type the record states (magic-byte sniffing). */
  'wrong-type',
  /** Larger than `files.maxBytes` (or the platform's limit). */
  'too-large',
] as const
export type FileFailureCause = (typeof FILE_FAILURE_CAUSES)[number]

/** A failure about one file. `retryable` ones are tried again (with backoff, honouring `retryAfterMs`). */
export class FileSourceError extends Error {
  override readonly name = 'FileSourceError'
  readonly fileCause: FileFailureCause
  readonly retryable: boolean
  readonly retryAfterMs: number | undefined
  constructor(fileCause: FileFailureCause, message: string, retryable: boolean, retryAfterMs?: number) {
    super(message)
    this.fileCause = fileCause
    this.retryable = retryable
    this.retryAfterMs = retryAfterMs
  }
}

/** What the store knows of one object. */
export interface StoredObject {
  readonly size: number
}

/** The customer's store for the copies: an S3-compatible bucket or a local directory. */
export interface FileStore {
  /** Where it writes, for messages and reports (`s3://bucket/prefix at endpoint`, a directory), never a credential. */
  readonly description: string
  /**
   * Proves the store can be written and read with the configured credentials before anything is
   * downloaded; throws a ChatferryError (configuration) naming the store and the cause otherwise.
   */
  check(signal?: AbortSignal): Promise<void>
  /** The object at `key`, or undefined when there is none. */
  stat(key: string, signal?: AbortSignal): Promise<StoredObject | undefined>
  /**
   * Writes a checked copy as `key` (multipart when large): the local file at `source` (a spool
   * file), or the bytes themselves (a small file the files lane kept in memory).
   */
  put(key: string, source: string | Uint8Array, meta: PutMeta, signal?: AbortSignal): Promise<void>
  /** The permanent public URL of `key` (the configured base URL + key). Never presigned, never expiring. */
  publicUrl(key: string): string
  close?(): Promise<void>
}

export interface PutMeta {
  readonly size: number
  readonly contentType: string
  /** Hex SHA-256 of the bytes. */
  readonly sha256: string
}
