/**
 * What the files lane asks of one copy (files-core's `copyFile`, src/files/copy/copy-file.ts):
 * the file, and the outcome — copied with its proof, or failed with its cause. A copy that cannot
 * write to the store (refused, unreachable) throws instead: that is no fault of the file, and the
 * lane pauses without counting an attempt.
 */
import type { FileFailureCause, FileLocator } from '../../model/files.ts'

/** One file to copy. */
export interface FileToCopy {
  /** The ledger's id of the file (`chatferry.files.id`). */
  readonly id: number
  readonly locator: FileLocator
  readonly name: string
  readonly expectedSize?: number
  readonly expectedType?: string
  /** An earlier copy may have put the bytes unrecorded: ask the store before the upload (copyFile's `mayBeStored`). */
  readonly mayBeStored?: boolean
  /** The ledger: another file of the job is copied under this key with this size (no upload, no store request). */
  readonly copiedUnderKey?: (storeKey: string, bytes: number) => Promise<boolean>
}

export type CopyOutcome =
  | {
      readonly ok: true
      readonly bytes: number
      readonly sha256: string
      readonly sniffedType: string
      readonly storeKey: string
      readonly publicUrl: string
      /** False when the store already held the same bytes under the key (nothing uploaded). */
      readonly uploaded: boolean
    }
  | {
      readonly ok: false
      readonly cause: FileFailureCause
      readonly reason: string
      readonly retryable: boolean
      readonly retryAfterMs?: number
    }

/** Copies one file; throws when the store cannot be written (the lane pauses). */
export type FileCopier = (file: FileToCopy, signal: AbortSignal) => Promise<CopyOutcome>
