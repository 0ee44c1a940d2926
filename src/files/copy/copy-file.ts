/**
 * Copying one file: source → spool file (hashed as it arrives, resumable) → checked → the store,
 * under its content-addressed key, once.
 *
 * 1. Download into `<spoolDir>/<id>.part` (spool-download.ts), each attempt through the host's
 *    pool and rate (the pacer); retryable failures (429, 5xx, resets, stalls, truncation) are tried
 *    again up to `attempts` times with exponential backoff, waiting at least a `Retry-After`
 *    (one longer than `maxRetryAfterMs` ends the attempts: the lane tries the file later).
 * 2. Check the bytes (check-bytes.ts): size, HTML where a file was expected, magic bytes.
 * 3. Key `sha256/<ab>/<hex>.<ext>` (store-key.ts), stored once:
 *    - the ledger has another file `copied` under that key (`file.copiedUnderKey`): nothing is
 *      uploaded and the store is not asked (a file shared many times);
 *    - an earlier copy may have put it unrecorded (`file.mayBeStored`, the default; the lane says
 *      so after a crash between upload and ledger write, a lost lease): `stat`, and `put` unless
 *      the store holds the key with this size;
 *    - otherwise `put` at once (no `stat`: one store request per file, like a direct copy).
 *    Small files (at most `memoryBytes`, 1 MiB by default) are kept in memory instead of spooled.
 * 4. The spool file is removed once the copy is stored, or when the file failed for good; a
 *    retryable failure keeps it, so the next attempt resumes from its length.
 *
 * A file's failure is an outcome (`{ ok: false, cause, reason, retryable }`). A store that refuses
 * or cannot be reached is not the file's failure: {@link StoreUnavailableError} is thrown (the
 * bytes stay spooled) and the lane pauses. An abort through `signal` rejects with its reason.
 */
import { createHash } from 'node:crypto'
import { mkdir, open, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'

import pRetry from 'p-retry'

import { type FileReader, FileSourceError, type FileStore } from '../../model/files.ts'
import type { BandwidthLimit } from '../pace/bandwidth-limit.ts'
import type { HostPacer } from '../pace/host-pacer.ts'
import { shownLocator } from '../read/shown-url.ts'
import { StoreUnavailableError } from '../store/store-errors.ts'
import { checkBytes } from './check-bytes.ts'
import type { CopyOutcome, FailedFile, FileToCopy } from './copy-outcome.ts'
import { spoolDownload, type Spooled } from './spool-download.ts'

/** file-type, loaded with the first file sniffed: a process that copies no file never loads its modules. */
let fileType: Promise<typeof import('file-type')> | undefined
import { contentKey, keyExtension } from './store-key.ts'

export interface CopyLimits {
  /** `files.maxBytes`. */
  readonly maxBytes: number
  /** `files.stallTimeoutSeconds` × 1000. */
  readonly stallTimeoutMs: number
  /** `files.attempts`: attempts in this call, the first included. */
  readonly attempts: number
  /** Files announced at most this size are kept in memory rather than spooled (0: spool all). @default 1 MiB */
  readonly memoryBytes?: number
}

/** Small files skip the spool: at most this much memory per copy in flight. */
export const DEFAULT_MEMORY_BYTES = 1024 * 1024

export interface CopyBackoff {
  /** First wait between attempts. @default 1000 */
  readonly minTimeoutMs: number
  /** Longest wait between attempts. @default 60_000 */
  readonly maxTimeoutMs: number
  /** A Retry-After longer than this ends the attempts (retryable, with `retryAfterMs`). @default 300_000 */
  readonly maxRetryAfterMs: number
}

export const DEFAULT_BACKOFF: CopyBackoff = { minTimeoutMs: 1000, maxTimeoutMs: 60_000, maxRetryAfterMs: 300_000 }

export interface CopyDeps {
  /** The reader for `file.locator.reader`. */
  readonly reader: FileReader
  readonly store: FileStore
  readonly spoolDir: string
  readonly limits: CopyLimits
  readonly pacer: HostPacer
  readonly bandwidth?: BandwidthLimit | undefined
  readonly backoff?: CopyBackoff | undefined
  readonly signal?: AbortSignal | undefined
}

const SNIFF_BYTES = 64 * 1024
const madeSpoolDirs = new Set<string>()

export async function copyFile(file: FileToCopy, deps: CopyDeps): Promise<CopyOutcome> {
  const shown = shownLocator(file.locator)
  if (!madeSpoolDirs.has(deps.spoolDir)) {
    await mkdir(deps.spoolDir, { recursive: true })
    madeSpoolDirs.add(deps.spoolDir)
  }
  const partPath = spoolPath(deps.spoolDir, file.id)
  let spooled: Spooled
  try {
    spooled = await download(file, deps, partPath, shown)
  } catch (err) {
    if (!(err instanceof FileSourceError)) {
      throw err
    }
    if (!err.retryable) {
      await rm(partPath, { force: true })
    }
    return failure(err.fileCause, namingTheFile(shown, err.message), err.retryable, err.retryAfterMs)
  }
  // One read of the first 64 KiB serves both the sniff (file-type needs at most a few KiB for
  // all but ZIP-based formats, which then sniff as ZIP) and the HTML check.
  const head = spooled.memory ? spooled.memory.subarray(0, SNIFF_BYTES) : await readHead(partPath, SNIFF_BYTES)
  const sniffed = await (await (fileType ??= import('file-type'))).fileTypeFromBuffer(head)
  const verdict = checkBytes({
    name: file.name,
    bytes: spooled.bytes,
    maxBytes: deps.limits.maxBytes,
    head,
    ...optional('announcedSize', spooled.announcedSize),
    ...optional('expectedSize', file.expectedSize),
    ...optional('declaredType', spooled.declaredType),
    ...optional('expectedType', file.expectedType),
    ...optional('sniffedType', sniffed?.mime),
  })
  if (!verdict.ok) {
    await rm(partPath, { force: true })
    return failure(verdict.cause, `${shown}: ${verdict.reason}`, false)
  }
  const contentType = sniffed?.mime ?? nonEmpty(file.expectedType) ?? nonEmpty(spooled.declaredType) ?? 'application/octet-stream'
  const storeKey = contentKey(spooled.sha256, keyExtension(sniffed?.ext, file.name))
  const known = file.copiedUnderKey !== undefined && (await file.copiedUnderKey(storeKey, spooled.bytes))
  const uploaded =
    !known &&
    (await storeOnce(
      deps,
      storeKey,
      spooled.memory ?? partPath,
      { size: spooled.bytes, contentType, sha256: spooled.sha256 },
      file.mayBeStored ?? true,
    ))
  if (!spooled.memory) {
    await rm(partPath, { force: true })
  }
  return {
    ok: true,
    bytes: spooled.bytes,
    sha256: spooled.sha256,
    sniffedType: sniffed?.mime,
    contentType,
    storeKey,
    publicUrl: deps.store.publicUrl(storeKey),
    uploaded,
  }
}

/** The spool file of a ledger file id (ids that are not plain names are hashed). */
export function spoolPath(spoolDir: string, id: string): string {
  const name = /^[A-Za-z0-9_-]{1,128}$/.test(id) ? id : createHash('sha256').update(id).digest('hex')
  return join(spoolDir, `${name}.part`)
}

/** Removes a file's spool part (the lane calls it when it gives a file up for good). */
export async function discardSpool(spoolDir: string, id: string): Promise<void> {
  await rm(spoolPath(spoolDir, id), { force: true })
}

async function download(file: FileToCopy, deps: CopyDeps, partPath: string, shown: string): Promise<Spooled> {
  const backoff = deps.backoff ?? DEFAULT_BACKOFF
  const signal = deps.signal
  const waitable = (e: unknown): e is FileSourceError =>
    e instanceof FileSourceError && e.retryable && (e.retryAfterMs ?? 0) <= backoff.maxRetryAfterMs
  const attempt = () =>
    deps.pacer.run(
      file.locator.host,
      () =>
        spoolDownload({
          reader: deps.reader,
          ref: file.locator.ref,
          shown,
          partPath,
          maxBytes: deps.limits.maxBytes,
          stallTimeoutMs: deps.limits.stallTimeoutMs,
          bandwidth: deps.bandwidth,
          signal,
          memoryBytes: deps.limits.memoryBytes ?? DEFAULT_MEMORY_BYTES,
        }),
      signal,
    )
  return pRetry(attempt, {
    retries: Math.max(0, deps.limits.attempts - 1),
    minTimeout: backoff.minTimeoutMs,
    maxTimeout: backoff.maxTimeoutMs,
    factor: 2,
    randomize: true,
    ...(signal ? { signal } : {}),
    shouldRetry: ({ error }) => waitable(error),
    onFailedAttempt: async ({ error, retryDelay, retriesLeft }) => {
      // p-retry waits retryDelay; a longer Retry-After is waited out here first.
      if (retriesLeft > 0 && waitable(error) && (error.retryAfterMs ?? 0) > retryDelay) {
        await sleep((error.retryAfterMs ?? 0) - retryDelay, undefined, signal ? { signal } : {})
      }
    },
  })
}

/** Put, after a stat when the bytes may be stored already (then no put if the store holds the key at this size). Store errors become StoreUnavailableError. */
async function storeOnce(
  deps: CopyDeps,
  key: string,
  source: string | Uint8Array,
  meta: { size: number; contentType: string; sha256: string },
  mayBeStored: boolean,
): Promise<boolean> {
  const { store, signal } = deps
  try {
    if (mayBeStored && (await store.stat(key, signal))?.size === meta.size) {
      return false
    }
    await store.put(key, source, meta, signal)
    return true
  } catch (err) {
    if (signal?.aborted || err instanceof StoreUnavailableError) {
      throw err
    }
    throw new StoreUnavailableError(store.description, (err as Error).message, { cause: err })
  }
}

async function readHead(path: string, bytes: number): Promise<Uint8Array> {
  const handle = await open(path, 'r')
  try {
    const buffer = Buffer.alloc(bytes)
    const { bytesRead } = await handle.read(buffer, 0, bytes, 0)
    return buffer.subarray(0, bytesRead)
  } finally {
    await handle.close()
  }
}

function failure(cause: FailedFile['cause'], reason: string, retryable: boolean, retryAfterMs?: number): FailedFile {
  return { ok: false, cause, reason, retryable, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) }
}

/** A reader's message, prefixed with the file's locator unless it already names the file. */
function namingTheFile(shown: string, message: string): string {
  const shownRef = shown.slice(shown.indexOf(' ') + 1)
  return message.includes(shownRef) ? message : `${shown}: ${message}`
}

function nonEmpty(s: string | undefined): string | undefined {
  return s === undefined || s.trim() === '' ? undefined : s
}

function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V }
}
