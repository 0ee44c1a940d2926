/**
 * One attempt at downloading one file into its spool file `<spoolDir>/<id>.part`, hashing
 * (SHA-256) as the bytes pass: memory holds a chunk at a time whatever the size.
 *
 * - Resume: a `.part` already there (an earlier attempt, a killed process) is hashed from disk and
 *   the source is asked from its length on. When the source answers from byte 0 instead (it
 *   ignores ranges), the part is rewritten from the start; any other start is refused.
 * - Stall: a timer reset by every chunk (and armed while waiting for the answer) aborts the
 *   attempt when nothing arrives for `stallTimeoutMs`: `unavailable`, retryable, the part kept.
 * - Too large: an announced size over `maxBytes` fails before the body is read, and a body that
 *   passes `maxBytes` is stopped at that byte (`too-large`, not retryable).
 * - Truncated: a body that ends (or breaks) before the announced size is `truncated`, retryable:
 *   the next attempt resumes from what arrived.
 * - Small files (announced at most `memoryBytes`, nothing spooled yet) are kept in memory instead:
 *   no spool file to write, read back and remove, which is most of a small file's cost. At most
 *   `memoryBytes` per copy in flight.
 */
import { createHash, type Hash } from 'node:crypto'
import { createReadStream, createWriteStream, statSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import { type Readable, Transform } from 'node:stream'
import { pipeline } from 'node:stream/promises'

import { type FileReader, FileSourceError, type OpenedFile } from '../../model/files.ts'
import type { BandwidthLimit } from '../pace/bandwidth-limit.ts'

export interface SpoolTarget {
  readonly reader: FileReader
  readonly ref: string
  /** How errors name the file (its locator without credentials). */
  readonly shown: string
  readonly partPath: string
  readonly maxBytes: number
  readonly stallTimeoutMs: number
  readonly bandwidth?: BandwidthLimit | undefined
  readonly signal?: AbortSignal | undefined
  /** Files announced at most this size are kept in memory, not spooled. @default 0 (never) */
  readonly memoryBytes?: number | undefined
}

export interface Spooled {
  /** Bytes in the spool file. */
  readonly bytes: number
  readonly sha256: string
  /** The whole file's size as the source announced it. */
  readonly announcedSize?: number
  /** The Content-Type the source declared. */
  readonly declaredType?: string
  /** Bytes this attempt read from the source (less than `bytes` after a resume). */
  readonly received: number
  /** The bytes, when the file was small enough to keep in memory (then there is no spool file). */
  readonly memory?: Buffer
}

class Stalled extends Error {}

export async function spoolDownload(t: SpoolTarget): Promise<Spooled> {
  let offset = partLength(t.partPath)
  if (offset > t.maxBytes) {
    await rm(t.partPath, { force: true })
    offset = 0
  }
  const hash = createHash('sha256')
  if (offset > 0) {
    await hashFile(t.partPath, hash)
  }
  const stall = new AbortController()
  const signal = t.signal ? AbortSignal.any([stall.signal, t.signal]) : stall.signal
  // One timer per attempt, pushed back by every chunk (refresh: no new timer per chunk).
  const timer = setTimeout(() => stall.abort(new Stalled()), t.stallTimeoutMs)
  const arm = () => void timer.refresh()
  try {
    const opened = await openAt(t, offset, signal, stall)
    const restart = opened.start === 0 && offset > 0
    const from = restart ? 0 : offset
    const sum = restart ? createHash('sha256') : hash
    const small = from === 0 && opened.size !== undefined && opened.size <= (t.memoryBytes ?? 0)
    let memory: Buffer | undefined
    let received: number
    if (small) {
      if (offset > 0) {
        // The source restarted a spooled file that turns out small: the part is of no more use.
        await rm(t.partPath, { force: true })
      }
      ;({ received, memory } = await readToMemory(t, opened, sum, signal, stall, arm))
    } else {
      received = await readInto(t, opened, from, sum, signal, stall, arm)
    }
    const bytes = from + received
    if (opened.size !== undefined && bytes < opened.size) {
      throw new FileSourceError('truncated', `${t.shown}: the body ended at byte ${bytes} of ${opened.size}`, true)
    }
    return {
      bytes,
      sha256: sum.digest('hex'),
      received,
      ...(memory === undefined ? {} : { memory }),
      ...(opened.size === undefined ? {} : { announcedSize: opened.size }),
      ...(opened.contentType === undefined ? {} : { declaredType: opened.contentType }),
    }
  } finally {
    clearTimeout(timer)
  }
}

async function openAt(t: SpoolTarget, offset: number, signal: AbortSignal, stall: AbortController): Promise<OpenedFile> {
  let opened: OpenedFile
  try {
    opened = await t.reader.open(t.ref, { offset, signal })
  } catch (err) {
    throw named(err, t, stall, 0)
  }
  if (opened.start !== offset && opened.start !== 0) {
    opened.body.destroy()
    await rm(t.partPath, { force: true })
    throw new FileSourceError('unavailable', `${t.shown}: the source answered from byte ${opened.start} when byte ${offset} was asked`, true)
  }
  if (opened.size !== undefined && opened.size > t.maxBytes) {
    opened.body.destroy()
    await rm(t.partPath, { force: true })
    throw new FileSourceError('too-large', `${t.shown}: ${opened.size} bytes, over the limit of ${t.maxBytes}`, false)
  }
  return opened
}

async function readInto(
  t: SpoolTarget,
  opened: OpenedFile,
  from: number,
  hash: Hash,
  signal: AbortSignal,
  stall: AbortController,
  arm: () => void,
): Promise<number> {
  let received = 0
  const meter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      arm()
      received += chunk.length
      if (from + received > t.maxBytes) {
        callback(new FileSourceError('too-large', `${t.shown}: more than the limit of ${t.maxBytes} bytes`, false))
        return
      }
      hash.update(chunk)
      callback(null, chunk)
    },
  })
  const out = createWriteStream(t.partPath, { flags: from === 0 ? 'w' : 'a' })
  const stages: (Readable | Transform)[] = [opened.body, meter]
  if (t.bandwidth) {
    stages.push(t.bandwidth.throttle(signal))
  }
  try {
    await pipeline([...stages, out], { signal })
  } catch (err) {
    if (err instanceof FileSourceError && err.fileCause === 'too-large') {
      await rm(t.partPath, { force: true })
    }
    throw named(err, t, stall, from + received, opened.size)
  }
  return received
}

/**
 * A small file's body into memory: the same checks, hash and stall timer as {@link readInto},
 * without a stream pipeline (for a file of a few chunks, the pipeline's streams and abort
 * plumbing cost more CPU than its bytes). An abort (stall, stop) destroys the body.
 */
async function readToMemory(
  t: SpoolTarget,
  opened: OpenedFile,
  hash: Hash,
  signal: AbortSignal,
  stall: AbortController,
  arm: () => void,
): Promise<{ received: number; memory: Buffer }> {
  if (t.signal?.aborted) {
    opened.body.destroy()
    throw t.signal.reason
  }
  const chunks: Buffer[] = []
  let received = 0
  const onAbort = () => opened.body.destroy(signal.reason as Error)
  signal.addEventListener('abort', onAbort, { once: true })
  try {
    for await (const chunk of opened.body as AsyncIterable<Buffer>) {
      arm()
      received += chunk.length
      if (received > t.maxBytes) {
        throw new FileSourceError('too-large', `${t.shown}: more than the limit of ${t.maxBytes} bytes`, false)
      }
      if (opened.size !== undefined && received > opened.size) {
        throw new FileSourceError('size-mismatch', `${t.shown}: more bytes than the ${opened.size} the source announced`, false)
      }
      if (t.bandwidth) {
        await t.bandwidth.take(chunk.length, signal)
      }
      hash.update(chunk)
      chunks.push(chunk)
    }
  } catch (err) {
    throw named(err, t, stall, received, opened.size)
  } finally {
    signal.removeEventListener('abort', onAbort)
  }
  return { received, memory: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, received) }
}

/** An attempt's error as a FileSourceError; the caller's own abort passes through as it is. */
function named(err: unknown, t: SpoolTarget, stall: AbortController, at: number, size?: number): unknown {
  if (err instanceof FileSourceError) {
    return err
  }
  if ((err as { path?: unknown }).path === t.partPath) {
    // The spool directory's own failure (full, not writable): not the file's; the lane stops.
    return err
  }
  if (stall.signal.aborted && !t.signal?.aborted) {
    return new FileSourceError('unavailable', `${t.shown}: stalled (nothing received for ${t.stallTimeoutMs / 1000} s) at byte ${at}`, true)
  }
  if (t.signal?.aborted) {
    return t.signal.reason
  }
  if (size !== undefined && at < size) {
    return new FileSourceError('truncated', `${t.shown}: the connection broke at byte ${at} of ${size}`, true)
  }
  const code = (err as { code?: unknown }).code
  return new FileSourceError('unavailable', `${t.shown}: reading failed (${typeof code === 'string' ? code : 'stream error'})`, true)
}

/** The spool part's length; 0 when there is none (a stat without an exception: most files have none). */
function partLength(path: string): number {
  return statSync(path, { throwIfNoEntry: false })?.size ?? 0
}

async function hashFile(path: string, hash: Hash): Promise<void> {
  for await (const chunk of createReadStream(path)) {
    hash.update(chunk as Buffer)
  }
}
