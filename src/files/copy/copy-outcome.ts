/**
 * What copying one file gives the files lane: a copy (its bytes, hash, sniffed type, store key and
 * public URL) or a failure with its cause, its reason (naming the file by its locator, without
 * credentials) and whether a later attempt can help.
 */
import type { FileFailureCause, FileLocator } from '../../model/files.ts'

/** One file to copy, as the ledger holds it. */
export interface FileToCopy {
  /** The ledger's file id; names the spool file `<spoolDir>/<id>.part`. */
  readonly id: string
  readonly locator: FileLocator
  /** The file's name as the record gives it. */
  readonly name: string
  /** The size the legacy record states, when it does. */
  readonly expectedSize?: number | undefined
  /** The MIME type the legacy record states, when it does. */
  readonly expectedType?: string | undefined
  /**
   * Whether an earlier copy of ours may have put these bytes in the store without recording it
   * (a claim before this one ended unsettled: a SIGKILL between upload and ledger write, a lease
   * that ran out). True (the default): the store is asked (`stat`) before the upload. False only
   * when the caller knows better (the lane: the file's first claim, nothing in doubt in the job);
   * then the bytes are put at once — a PUT of identical bytes under a content-addressed key is
   * idempotent, so even a copy from elsewhere (another job sharing the bucket) is not harmed.
   */
  readonly mayBeStored?: boolean | undefined
  /**
   * The ledger's answer to "is a file with these bytes already copied under this key" (another
   * file of the job settled `copied` after its upload): true → no upload and no `stat`.
   */
  readonly copiedUnderKey?: ((storeKey: string, bytes: number) => Promise<boolean>) | undefined
}

export interface CopiedFile {
  readonly ok: true
  readonly bytes: number
  /** Hex SHA-256 of the bytes. */
  readonly sha256: string
  /** The type file-type found in the bytes; undefined for formats without magic bytes (text). */
  readonly sniffedType: string | undefined
  /** The Content-Type the copy was stored with. */
  readonly contentType: string
  readonly storeKey: string
  readonly publicUrl: string
  /** False when the store already held these bytes under this key (no upload). */
  readonly uploaded: boolean
}

export interface FailedFile {
  readonly ok: false
  readonly cause: FileFailureCause
  /** Names the file by its locator (no credentials) and says what was wrong. */
  readonly reason: string
  /** Whether a later run can succeed (the source was unavailable, rate-limited, truncated); the spool part is kept for it. */
  readonly retryable: boolean
  readonly retryAfterMs?: number
}

export type CopyOutcome = CopiedFile | FailedFile
