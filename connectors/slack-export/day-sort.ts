/**
 * A day file's messages in the order they are read: those with a valid `ts` by `ts` (stable), then
 * the rest in file order. A small file is sorted in memory. A large one (streamed, see
 * day-file.ts) is read twice or more: a first pass keeps only each element's `ts`, which gives the
 * order; when the file is already in order (as Slack writes it) a second pass yields its elements
 * as they come, else each further pass picks out the next window of the order (about
 * {@link WINDOW_BYTES} of elements): memory stays bounded by the window, never by the file.
 */
import type { ExportArchive } from '../archive/archive.ts'
import { type ParsedItem, readArrayFile, readsWhole, STREAM_BATCH, streamItems } from '../archive/array-file.ts'
import { compareTs, isExactTsNumber, isObject, isTs, tsNumber } from './entities/fields.ts'

/** About how many bytes of elements one pass over an unsorted large file keeps. */
export const WINDOW_BYTES = 32 * 1024 * 1024

export const tsOf = (item: ParsedItem): string | undefined =>
  'value' in item && isObject(item.value) && isTs(item.value.ts) ? item.value.ts : undefined

/**
 * Whether a file's items are all timed and already in order, as Slack writes its day files: then
 * they are read as they are. Compares the `ts` as numbers, exact for every `ts` before the year
 * 2255; a later one takes the general sort.
 */
function inOrder(items: readonly ParsedItem[]): boolean {
  let previous = Number.NEGATIVE_INFINITY
  for (const item of items) {
    const ts = tsOf(item)
    const n = ts === undefined ? Number.NaN : tsNumber(ts)
    if (!(n >= previous) || !isExactTsNumber(n)) {
      return false
    }
    previous = n
  }
  return true
}

/** A day file's items: those with a valid `ts` by `ts` (stable), then the rest in file order. */
export function sortDay(items: ParsedItem[]): ParsedItem[] {
  if (inOrder(items)) {
    return items
  }
  const keyed = items.map((item) => ({ item, ts: tsOf(item) }))
  const timed = keyed.filter((k) => k.ts !== undefined)
  timed.sort((a, b) => compareTs(a.ts as string, b.ts as string) || a.item.index - b.item.index)
  return [...timed.map((k) => k.item), ...keyed.filter((k) => k.ts === undefined).map((k) => k.item)]
}

/** The read order of a large file from one pass: file indexes, by `ts` then untimed; or one broken item. */
async function orderOf(archive: ExportArchive, path: string, maxElementBytes: number): Promise<{ order: Int32Array } | { broken: ParsedItem }> {
  // One double per element (its ts as a number, NaN when it has none), and the text only for the rare ts too large to be exact.
  let keys = new Float64Array(1024)
  const inexact = new Map<number, string>()
  let n = 0
  for await (const item of streamItems(archive, path, maxElementBytes)) {
    if ('error' in item && item.wholeFile === true) {
      return { broken: { index: 0, error: item.error } }
    }
    if (n === keys.length) {
      const grown = new Float64Array(keys.length * 2)
      grown.set(keys)
      keys = grown
    }
    const ts = tsOf(item)
    keys[n] = ts === undefined ? Number.NaN : tsNumber(ts)
    if (ts !== undefined && !isExactTsNumber(keys[n] as number)) {
      inexact.set(n, ts)
    }
    n++
  }
  const order = new Int32Array(n)
  let timed = 0
  for (let i = 0; i < n; i++) {
    if (!Number.isNaN(keys[i] as number)) {
      order[timed++] = i
    }
  }
  let untimed = timed
  for (let i = 0; i < n; i++) {
    if (Number.isNaN(keys[i] as number)) {
      order[untimed++] = i
    }
  }
  const k = keys
  const exact = (a: number, b: number) => {
    const ta = inexact.get(a)
    const tb = inexact.get(b)
    return ta !== undefined && tb !== undefined ? compareTs(ta, tb) : 0
  }
  order.subarray(0, timed).sort((a, b) => (k[a] as number) - (k[b] as number) || exact(a, b) || a - b)
  return { order }
}

/** A large file's items in read order, in batches. */
async function* streamedSorted(archive: ExportArchive, path: string, maxElementBytes: number, windowBytes: number): AsyncGenerator<ParsedItem[]> {
  const found = await orderOf(archive, path, maxElementBytes)
  if ('broken' in found) {
    yield [found.broken]
    return
  }
  const { order } = found
  if (order.every((index, rank) => index === rank)) {
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
    return
  }
  const rankOf = new Int32Array(order.length)
  order.forEach((index, rank) => {
    rankOf[index] = rank
  })
  const perWindow = Math.max(1, Math.floor(windowBytes / Math.max(1, archive.sizeOf(path) / Math.max(1, order.length))))
  for (let from = 0; from < order.length; from += perWindow) {
    const to = Math.min(order.length, from + perWindow)
    const window: ParsedItem[] = new Array<ParsedItem>(to - from)
    let picked = 0
    for await (const item of streamItems(archive, path, maxElementBytes)) {
      const rank = rankOf[item.index] ?? -1
      if (rank >= from && rank < to) {
        window[rank - from] = item
        if (++picked === to - from) {
          break
        }
      }
    }
    yield window
  }
}

/** A day file's items in read order, in batches (one for a small file). */
export async function* sortedDay(
  archive: ExportArchive,
  path: string,
  maxElementBytes: number,
  windowBytes = WINDOW_BYTES,
): AsyncGenerator<ParsedItem[]> {
  if (readsWhole(archive, path, maxElementBytes)) {
    yield sortDay(await readArrayFile(archive, path, maxElementBytes))
  } else {
    yield* streamedSorted(archive, path, maxElementBytes, windowBytes)
  }
}
