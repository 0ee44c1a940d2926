/**
 * Reading the JSON array files of an export (a Slack day file `general/2024-01-02.json`, a
 * Sendbird export's JSON file). Such a file is usually small: up to {@link WHOLE_READ_BYTES} it is read and
 * parsed whole (the fast path). A larger one is streamed element by element (json-array.ts), so
 * memory is bounded by one element, however large the file. When a file does not parse, the
 * elements before the break are still read one by one and the break is one broken item; a file
 * that cannot be read at all (corrupt, over a cap) is one broken item; an element that is too
 * large or not UTF-8 is one broken item and the file reads on.
 */
import { isUtf8 } from 'node:buffer'

import { EntryUnreadable, type ExportArchive } from './archive.ts'
import { type ArrayItem, jsonArrayItems } from './json-array.ts'

/** Files up to this size are read and parsed whole; larger ones are streamed. */
export const WHOLE_READ_BYTES = 16 * 1024 * 1024

export type ParsedItem =
  | { readonly index: number; readonly value: unknown }
  /** `wholeFile`: the file's bytes cannot be trusted at all (a wrong CRC-32): the items before this one are void too. */
  | { readonly index: number; readonly error: string; readonly wholeFile?: true }

/** Parses one array element's text. */
export function parseElement(index: number, text: string): ParsedItem {
  if (text === '') {
    return { index, error: 'empty array element' }
  }
  try {
    return { index, value: JSON.parse(text) as unknown }
  } catch (err) {
    return { index, error: `broken JSON: ${(err as Error).message}` }
  }
}

const parsed = (item: ArrayItem): ParsedItem =>
  item.kind === 'element'
    ? parseElement(item.index, item.text)
    : { index: item.index, error: item.reason, ...(item.kind === 'broken' && item.prefixValid === false ? { wholeFile: true as const } : {}) }

/** The file as one broken item: it cannot be read at all. */
const unreadable = (err: EntryUnreadable): ParsedItem => ({ index: 0, error: `the file cannot be read: ${err.message}` })

/** The parsed elements of a file, streamed one by one: memory bounded by one element. */
export async function* streamItems(archive: ExportArchive, path: string, maxElementBytes: number): AsyncGenerator<ParsedItem> {
  let stream: AsyncIterable<Buffer>
  try {
    stream = await archive.open(path)
  } catch (err) {
    if (err instanceof EntryUnreadable) {
      yield unreadable(err)
      return
    }
    throw err
  }
  for await (const item of jsonArrayItems(stream, maxElementBytes)) {
    yield parsed(item)
  }
}

async function collect(items: AsyncIterable<ParsedItem>): Promise<ParsedItem[]> {
  const all: ParsedItem[] = []
  for await (const item of items) {
    all.push(item)
  }
  return all
}

/** Whether a file is read whole: small, and no element of it can be over the element cap. */
export const readsWhole = (archive: ExportArchive, path: string, maxElementBytes: number) =>
  archive.sizeOf(path) <= Math.min(WHOLE_READ_BYTES, maxElementBytes)

/** The items of a small file, read whole: its elements, or what could be salvaged and the break. */
export async function readArrayFile(archive: ExportArchive, path: string, maxElementBytes: number): Promise<ParsedItem[]> {
  let bytes: Buffer
  try {
    bytes = await archive.read(path)
  } catch (err) {
    if (!(err instanceof EntryUnreadable)) {
      throw err
    }
    return err.prefixValid ? collect(streamItems(archive, path, maxElementBytes)) : [unreadable(err)]
  }
  let whole: unknown
  try {
    if (!isUtf8(bytes)) {
      throw new Error('not UTF-8: read element by element')
    }
    whole = JSON.parse(bytes.toString('utf8'))
  } catch {
    const items: ParsedItem[] = []
    for await (const item of jsonArrayItems([bytes], maxElementBytes)) {
      items.push(parsed(item))
    }
    return items
  }
  if (!Array.isArray(whole)) {
    return [{ index: 0, error: 'the file is not a JSON array' }]
  }
  return whole.map((value: unknown, index) => ({ index, value }))
}

/**
 * A file's items in file order, in batches of {@link STREAM_BATCH}: read whole when small, else
 * streamed. A whole file's items are handed out a batch at a time and let go of as they are, so the
 * parsed values of batches already read can be collected while the rest of the file is decoded.
 */
export async function* arrayFileBatches(archive: ExportArchive, path: string, maxElementBytes: number): AsyncGenerator<ParsedItem[]> {
  if (readsWhole(archive, path, maxElementBytes)) {
    const items: (ParsedItem | undefined)[] = await readArrayFile(archive, path, maxElementBytes)
    for (let from = 0; from < items.length; from += STREAM_BATCH) {
      const batch = items.slice(from, from + STREAM_BATCH) as ParsedItem[]
      items.fill(undefined, from, from + STREAM_BATCH)
      yield batch
    }
    return
  }
  let batch: ParsedItem[] = []
  for await (const item of streamItems(archive, path, maxElementBytes)) {
    batch.push(item)
    if (batch.length >= STREAM_BATCH) {
      yield batch
      batch = []
    }
  }
  if (batch.length > 0) {
    yield batch
  }
}

/** Items per batch of a file, streamed or read whole. */
export const STREAM_BATCH = 1000
