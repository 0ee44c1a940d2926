/**
 * The files lane's view of the ledger (`store.files`, issue 27): `chatferry.files` (one row per
 * distinct file of a job) and `chatferry.file_links` (each message item's files, in order). The
 * lane (src/files/lane/) claims planned files under a fenced lease, settles each copied or failed
 * (attempts, last error, the failure policy), hands files back untried when the store goes away,
 * and reads the counts, the URL map and the copies `verify` checks. Planning records the files in
 * its page's transaction (`store.planPage`, `sql/upsert-planned-files.ts`); packing holds a
 * message until its files are settled (`sql/held-by-files.ts`) and sends it with them
 * (`file-payload.ts`). Every statement is one file in `sql/`.
 */
import type { Kysely } from 'kysely'

import type { StateDatabase } from './schema.ts'
import { type ClaimedFileRow, claimFiles } from './sql/claim-files.ts'
import { countFiles, type FileCountRow } from './sql/count-files.ts'
import { expireFileLeases } from './sql/expire-file-leases.ts'
import { releaseFile } from './sql/release-file.ts'
import { renewFileLeases } from './sql/renew-file-leases.ts'
import { reopenFiles } from './sql/reopen-files.ts'
import { selectCopiedStoreKeys, type SizedStoreKey } from './sql/select-copied-store-keys.ts'
import { selectFileLeaseOwners } from './sql/select-file-lease-owners.ts'
import { type FileRow, selectFiles } from './sql/select-files.ts'
import { selectFilesInDoubt } from './sql/select-files-in-doubt.ts'
import { type FileCopy, settleFileCopied } from './sql/settle-file-copied.ts'
import { type FileAttemptFailure, settleFileFailed } from './sql/settle-file-failed.ts'
import { skipOpenFiles } from './sql/skip-open-files.ts'

export type { ClaimedFileRow as ClaimedFile, FileAttemptFailure, FileCopy, FileCountRow as FileCounts, FileRow, SizedStoreKey }

/** A claim's handle: the file and the fence its settlement presents. */
export interface FileClaim {
  readonly id: number
  readonly fence: number
}

export interface FilesLedger {
  /**
   * Readies the job's files for a lane run: under `rehost`, applies `onFailure` to the failed
   * files (`wait`: planned again, attempts reset); under another mode, settles the planned ones
   * `skipped` so no message waits for them. Returns how many were planned again or skipped.
   */
  prepare(jobId: string, settings: { mode: string; onFailure: string }): Promise<{ reopened: number; skipped: number }>
  /** Claims up to `limit` planned files oldest first under `owner`'s lease (skips locked and leased rows). */
  claim(args: { jobId: string; owner: string; leaseSeconds: number; limit: number }): Promise<ClaimedFileRow[]>
  /** Renews `owner`'s leases on these claims; returns the ids still held. */
  renew(owner: string, claims: readonly FileClaim[], leaseSeconds: number): Promise<Set<number>>
  /** Settles a claim `copied`; false when the lease was lost (nothing written). */
  copied(claim: FileClaim, owner: string, copy: FileCopy): Promise<boolean>
  /** Records a failed attempt: `planned` again (retry after the backoff) or `failed`; undefined when the lease was lost. */
  failed(claim: FileClaim, owner: string, failure: FileAttemptFailure): Promise<'planned' | 'failed' | undefined>
  /** Hands a claim back untried (no attempt counted). */
  release(claim: FileClaim, owner: string): Promise<void>
  /** The holders of the job's unexpired file leases (`host/pid`). */
  leaseOwners(jobId: string): Promise<string[]>
  /** Ends the leases of these (dead) holders now; returns how many files came back. */
  expireLeases(jobId: string, owners: readonly string[]): Promise<number>
  /**
   * Which of these keys a file of the job is `copied` under with that size (the store holds them:
   * no upload, no look). The lane asks for the copies that reach this step together at once.
   */
  copiedUnderKeys(jobId: string, keys: readonly SizedStoreKey[]): Promise<SizedStoreKey[]>
  /** Whether a planned file of the job was claimed before and is not held now (its copy may be in the store unrecorded). */
  inDoubt(jobId: string): Promise<boolean>
  /** The job's files by state, bytes, and the messages waiting on them. */
  counts(jobId: string): Promise<FileCountRow>
  /** The job's files in id order (`states` only when given), a page at a time. */
  list(jobId: string, filter?: { states?: readonly string[]; afterId?: number; limit?: number }): Promise<FileRow[]>
}

export function createFilesLedger(db: Kysely<StateDatabase>): FilesLedger {
  return {
    async prepare(jobId, settings) {
      if (settings.mode !== 'rehost') {
        return { reopened: 0, skipped: await skipOpenFiles(db, jobId, `files.mode ${settings.mode}`) }
      }
      return { reopened: await reopenFiles(db, jobId, settings.onFailure), skipped: 0 }
    },
    claim: (args) => claimFiles(db, args),
    renew: async (owner, claims, leaseSeconds) => new Set(await renewFileLeases(db, { owner, files: claims, leaseSeconds })),
    copied: (claim, owner, copy) => settleFileCopied(db, { ...claim, owner, copy }),
    failed: (claim, owner, failure) => settleFileFailed(db, { ...claim, owner, failure }),
    release: (claim, owner) => releaseFile(db, { ...claim, owner }),
    leaseOwners: (jobId) => selectFileLeaseOwners(db, jobId),
    expireLeases: (jobId, owners) => (owners.length === 0 ? Promise.resolve(0) : expireFileLeases(db, jobId, owners)),
    copiedUnderKeys: (jobId, keys) => selectCopiedStoreKeys(db, { jobId, keys }),
    inDoubt: (jobId) => selectFilesInDoubt(db, jobId),
    counts: (jobId) => countFiles(db, jobId),
    list: (jobId, filter) => selectFiles(db, jobId, filter),
  }
}
