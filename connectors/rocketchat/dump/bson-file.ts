/**
 * Reading one `mongodump` collection file (`<collection>.bson`: BSON documents back to back, each
 * starting with its int32 little-endian length) document by document from a byte position, with a
 * fixed read buffer: never the whole file in memory. A document is deserialised only when the
 * caller asks; a damaged one is reported at its position and the read goes on where it can.
 */
import { open } from 'node:fs/promises'

import { deserialize, type Document } from 'bson'

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

/** MongoDB refuses documents over 16 MiB; mongodump writes none larger (some slack for its own fields). */
export const MAX_DOCUMENT_BYTES = 16 * 1024 * 1024 + 16 * 1024
const MIN_DOCUMENT_BYTES = 5
const CHUNK_BYTES = 1024 * 1024

/** Deserialisation as the connector wants it: Int64 as numbers, binary left as it is. */
const OPTIONS = { promoteLongs: true, promoteValues: true, promoteBuffers: false } as const

/** The documents of `file` from `from` to the end, in the file's order. */
export async function* readDumpDocuments(file: string, from: DumpPosition = START, signal?: AbortSignal): AsyncGenerator<DumpDocument> {
  const fh = await open(file, 'r')
  try {
    const size = (await fh.stat()).size
    let buf = Buffer.allocUnsafe(CHUNK_BYTES)
    let bufStart = 0
    let bufLen = 0
    /** Makes bytes [pos, pos + n) available in `buf`; returns their start in it. */
    const ensure = async (pos: number, n: number): Promise<number> => {
      if (pos >= bufStart && pos + n <= bufStart + bufLen) {
        return pos - bufStart
      }
      if (n > buf.length) {
        buf = Buffer.allocUnsafe(n)
      }
      const { bytesRead } = await fh.read(buf, 0, Math.min(buf.length, size - pos), pos)
      bufStart = pos
      bufLen = bytesRead
      return 0
    }
    let offset = from.offset
    let index = from.index
    while (offset < size) {
      signal?.throwIfAborted()
      const at = { offset, index }
      const end = { offset: size, index: index + 1 }
      if (size - offset < 4) {
        yield { at, next: end, damage: `truncated: ${size - offset} byte(s) after the last document, too few for a length prefix` }
        return
      }
      const length = buf.readInt32LE(await ensure(offset, 4))
      if (length < MIN_DOCUMENT_BYTES || length > MAX_DOCUMENT_BYTES) {
        yield {
          at,
          next: end,
          damage: `length prefix ${length} at byte ${offset} is not a BSON document's; the remaining ${size - offset} bytes cannot be read`,
        }
        return
      }
      if (offset + length > size) {
        yield { at, next: end, damage: `truncated: the document at byte ${offset} declares ${length} bytes, the file ends after ${size - offset}` }
        return
      }
      const start = await ensure(offset, length)
      const next = { offset: offset + length, index: index + 1 }
      let doc: Document | undefined
      let damage: string | undefined
      try {
        doc = deserialize(buf.subarray(start, start + length), OPTIONS)
      } catch (err) {
        damage = `invalid BSON at byte ${offset}: ${(err as Error).message}`
      }
      yield damage === undefined ? { at, next, doc } : { at, next, damage }
      offset = next.offset
      index = next.index
    }
  } finally {
    await fh.close()
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
