/**
 * Finding the next readable document after damage in a `mongodump` collection file. A damaged
 * length prefix says nothing about where the next document starts, so the bytes after it are
 * searched: a position is taken when a whole document deserialises there and the one after it
 * does too (or the file ends right after it) — a single match could be a document embedded in
 * another one. Cheap checks first (a length in range that fits in the file, a known first element
 * type, the closing zero byte), so the search reads the file once, 1 MiB at a time.
 */
import type { FileHandle } from 'node:fs/promises'

import { deserialize } from 'bson'

/** MongoDB refuses documents over 16 MiB; mongodump writes none larger (some slack for its own fields). */
export const MAX_DOCUMENT_BYTES = 16 * 1024 * 1024 + 16 * 1024
export const MIN_DOCUMENT_BYTES = 5
const WINDOW = 1024 * 1024

/** BSON element types a document's first element may have (0 only in an empty document). */
const isElementType = (t: number) => (t >= 0x01 && t <= 0x13) || t === 0x7f || t === 0xff

const plausibleLength = (length: number, at: number, size: number) =>
  length >= MIN_DOCUMENT_BYTES && length <= MAX_DOCUMENT_BYTES && at + length <= size

/** The length of the document that deserialises at `at`, else undefined. */
export async function documentAt(fh: FileHandle, size: number, at: number): Promise<number | undefined> {
  if (size - at < MIN_DOCUMENT_BYTES) {
    return undefined
  }
  const head = Buffer.alloc(5)
  await fh.read(head, 0, 5, at)
  const length = head.readInt32LE(0)
  if (!plausibleLength(length, at, size) || !(isElementType(head[4] as number) || (length === 5 && head[4] === 0))) {
    return undefined
  }
  const bytes = Buffer.allocUnsafe(length)
  await fh.read(bytes, 0, length, at)
  if (bytes[length - 1] !== 0) {
    return undefined
  }
  try {
    deserialize(bytes)
    return length
  } catch {
    return undefined
  }
}

/** Whether the file reads on from `at`: a document there, and after it another one or the end. */
export async function readsOnAt(fh: FileHandle, size: number, at: number): Promise<boolean> {
  if (at === size) {
    return true
  }
  const length = await documentAt(fh, size, at)
  return length !== undefined && (at + length === size || (await documentAt(fh, size, at + length)) !== undefined)
}

/** The first position from `from` on where the file reads on; undefined when none does. */
export async function resync(fh: FileHandle, size: number, from: number, signal?: AbortSignal): Promise<number | undefined> {
  const window = Buffer.allocUnsafe(WINDOW + 4)
  for (let start = from; start + MIN_DOCUMENT_BYTES <= size; start += WINDOW) {
    signal?.throwIfAborted()
    const { bytesRead } = await fh.read(window, 0, Math.min(window.length, size - start), start)
    for (let i = 0; i + 5 <= bytesRead && i < WINDOW; i++) {
      const length = window.readInt32LE(i)
      if (
        plausibleLength(length, start + i, size) &&
        (isElementType(window[i + 4] as number) || length === 5) &&
        (await readsOnAt(fh, size, start + i))
      ) {
        return start + i
      }
    }
  }
  return undefined
}
