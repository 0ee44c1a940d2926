/**
 * Reading one `mongodump` collection file (`<collection>.bson`: BSON documents back to back, each
 * starting with its int32 little-endian length) document by document from a byte position, with a
 * fixed read buffer: never the whole file in memory (at most one document, ≤ 16 MiB, beyond it).
 * Damage (a length prefix that is no document's, a document cut short, invalid BSON) is reported
 * at its position with the exact byte range it costs, and the read goes on at the next document
 * that can be read (resync.ts); only when none follows is the rest of the file lost, and it says so.
 */
import { open } from 'node:fs/promises'

import { deserialize, type Document } from 'bson'

import { MAX_DOCUMENT_BYTES, MIN_DOCUMENT_BYTES, readsOnAt, resync } from './resync.ts'

export { MAX_DOCUMENT_BYTES } from './resync.ts'

/** Where a read stands: the byte offset of the next document and how many documents came before it. */
export interface DumpPosition {
  readonly offset: number
  readonly index: number
}

export const START: DumpPosition = { offset: 0, index: 0 }

/** One document of the file, or the damage found at its position. */
export interface DumpDocument {
  /** Where the document starts. */
  readonly at: DumpPosition
  /** Where the next one starts (the end of the file after damage that cannot be skipped). */
  readonly next: DumpPosition
  /** The deserialised document; absent when it is damaged. */
  readonly doc?: Document
  /** Why the document cannot be read (truncated, a bad length prefix, invalid BSON). */
  readonly damage?: string
}

const CHUNK_BYTES = 1024 * 1024

/**
 * The most documents a batch holds. A batch is consumed before the next one is deserialised, so a
 * small one lets its documents die young: a whole buffer's worth (thousands) outlived the young
 * generation's collections, was copied and promoted, and the read cost several times the raw
 * deserialisation (docs/testing.md, connector benchmark).
 */
const BATCH_DOCUMENTS = 256

/** Deserialisation as the connector wants it: Int64 as numbers, binary left as it is. */
const OPTIONS = { promoteLongs: true, promoteValues: true, promoteBuffers: false } as const

/** The bytes a damage costs: to the next readable document, or to the end. */
function skipped(from: number, to: number | undefined, size: number): string {
  return to === undefined
    ? `no readable document follows: bytes ${from}–${size} (${size - from}) cannot be read`
    : `bytes ${from}–${to} (${to - from}) skipped to the next readable document, at byte ${to}`
}

/**
 * The documents of `file` from `from` to the end, in the file's order, in batches: the documents
 * of one read buffer at a time (deserialised copies, so a batch outlives the buffer), which saves
 * an await per document.
 */
export async function* readDumpDocuments(file: string, from: DumpPosition = START, signal?: AbortSignal): AsyncGenerator<DumpDocument[]> {
  let batch: DumpDocument[] = []
  const fh = await open(file, 'r')
  try {
    const size = (await fh.stat()).size
    let buf = Buffer.allocUnsafe(CHUNK_BYTES)
    let bufStart = 0
    let bufLen = 0
    const has = (pos: number, n: number) => pos >= bufStart && pos + n <= bufStart + bufLen
    /** Reads from `pos` on into the buffer, at least `n` bytes (the caller checked the file has them). */
    const fill = async (pos: number, n: number) => {
      if (n > buf.length) {
        buf = Buffer.allocUnsafe(n)
      }
      const { bytesRead } = await fh.read(buf, 0, Math.min(buf.length, size - pos), pos)
      bufStart = pos
      bufLen = bytesRead
    }
    let offset = from.offset
    let index = from.index
    while (offset < size) {
      const at = { offset, index }
      const end = { offset: size, index: index + 1 }
      if (size - offset < 4) {
        batch.push({ at, next: end, damage: `truncated: ${size - offset} byte(s) after the last document, too few for a length prefix` })
        break
      }
      if (!has(offset, 4)) {
        yield* flush()
        await fill(offset, 4)
      }
      const length = buf.readInt32LE(offset - bufStart)
      const fits = length >= MIN_DOCUMENT_BYTES && length <= MAX_DOCUMENT_BYTES && offset + length <= size
      let next = { offset: offset + length, index: index + 1 }
      if (fits) {
        if (!has(offset, length)) {
          yield* flush()
          await fill(offset, length)
        }
        const start = offset - bufStart
        try {
          batch.push({ at, next, doc: deserialize(buf.subarray(start, start + length), OPTIONS) })
        } catch (err) {
          // A sound length leads to the next document: skip this one; else its length is damaged too.
          const skipTo = (await readsOnAt(fh, size, offset + length)) ? offset + length : await resync(fh, size, offset + 1, signal)
          next = { offset: skipTo ?? size, index: index + 1 }
          batch.push({ at, next, damage: `invalid BSON at byte ${offset}: ${(err as Error).message}; ${skipped(offset, skipTo, size)}` })
        }
      } else {
        const skipTo = await resync(fh, size, offset + 1, signal)
        next = { offset: skipTo ?? size, index: index + 1 }
        const what =
          length >= MIN_DOCUMENT_BYTES && length <= MAX_DOCUMENT_BYTES
            ? `truncated: the document at byte ${offset} declares ${length} bytes, the file ends after ${size - offset}`
            : `length prefix ${length} at byte ${offset} is not a BSON document's`
        batch.push({ at, next, damage: `${what}; ${skipped(offset, skipTo, size)}` })
      }
      offset = next.offset
      index = next.index
      if (batch.length >= BATCH_DOCUMENTS) {
        yield* flush()
      }
    }
    yield* flush()
  } finally {
    await fh.close()
  }

  function* flush(): Generator<DumpDocument[]> {
    signal?.throwIfAborted()
    if (batch.length > 0) {
      const full = batch
      batch = []
      yield full
    }
  }
}

/** The byte size of `file`, for a cursor check. */
export async function fileSize(file: string): Promise<number> {
  const fh = await open(file, 'r')
  try {
    return (await fh.stat()).size
  } finally {
    await fh.close()
  }
}
