/**
 * The messages entity: every conversation folder (sorted by name), its day files (sorted by date),
 * each file's messages sorted by `ts`. Position: `{c, d, i}` (folder, day file, index in the sorted
 * file). A day file is parsed whole (one day of one conversation); nothing else is held.
 */
import type { Cursor } from '../../src/model/connector.ts'
import type { LegacyMessage } from '../../src/model/records.ts'
import type { ExportArchive } from './archive/archive.ts'
import { DAY_FILE, type ParsedItem, readArrayFile } from './day-file.ts'
import { compareTs, isObject, isTs } from './entities/fields.ts'
import type { TextLookups } from './entities/message-text.ts'
import { decodeMessage, type MessageContext } from './entities/messages.ts'
import type { Layout } from './layout.ts'
import { decodeRow, type PositionedRow, problem } from './paging.ts'

export interface MessagesRead {
  readonly archive: ExportArchive
  readonly layout: Layout
  readonly lookups: TextLookups
  readonly fileUrl?: string
  readonly after?: Cursor
  readonly since?: number
  readonly signal?: AbortSignal
}

const tsOf = (item: ParsedItem): string | undefined => ('value' in item && isObject(item.value) && isTs(item.value.ts) ? item.value.ts : undefined)

/** A day file's items: those with a valid `ts` by `ts` (stable), then the rest in file order. */
export function sortDay(items: ParsedItem[]): ParsedItem[] {
  const keyed = items.map((item) => ({ item, ts: tsOf(item) }))
  const timed = keyed.filter((k) => k.ts !== undefined)
  let sorted = true
  for (let i = 1; i < timed.length && sorted; i++) {
    sorted = compareTs((timed[i - 1] as { ts: string }).ts, (timed[i] as { ts: string }).ts) <= 0
  }
  if (!sorted) {
    timed.sort((a, b) => compareTs(a.ts as string, b.ts as string) || a.item.index - b.item.index)
  }
  return [...timed.map((k) => k.item), ...keyed.filter((k) => k.ts === undefined).map((k) => k.item)]
}

/** The day files of a folder to read, from the cursor's on. */
function daysFrom(archive: ExportArchive, folder: string, after: Cursor | undefined): string[] {
  const days = archive.filesIn(folder).filter((f) => DAY_FILE.test(f))
  return after?.c === folder && typeof after.d === 'string' ? days.filter((d) => d >= (after.d as string)) : days
}

/** The day files to read, in order, from the cursor's on. */
function* dayFiles(o: MessagesRead): Generator<{ folder: string; day: string }> {
  const afterFolder = typeof o.after?.c === 'string' ? o.after.c : undefined
  for (const folder of o.archive.folders()) {
    if (afterFolder === undefined || folder >= afterFolder) {
      for (const day of daysFrom(o.archive, folder, o.after)) {
        yield { folder, day }
      }
    }
  }
}

/** A day file being read, its failure kept for when it is awaited (not an unhandled rejection meanwhile). */
function startReading(archive: ExportArchive, file: { folder: string; day: string } | undefined) {
  if (file === undefined) {
    return undefined
  }
  const items = readArrayFile(archive, `${file.folder}/${file.day}`)
  items.catch(() => {})
  return { ...file, items }
}

/**
 * The rows of each day file, one array per file (a day file is parsed whole anyway). The next file
 * is read while this one's rows are decoded and used, so the disk and the CPU overlap.
 */
export async function* messageRows(o: MessagesRead): AsyncGenerator<PositionedRow<LegacyMessage>[]> {
  const files = dayFiles(o)
  let next = startReading(o.archive, files.next().value ?? undefined)
  while (next !== undefined) {
    o.signal?.throwIfAborted()
    const { folder, day, items } = next
    next = startReading(o.archive, files.next().value ?? undefined)
    const conv = o.layout.byFolder.get(folder)
    const ctx: MessageContext | undefined = conv && { ...o.lookups, conversation: conv, ...(o.fileUrl !== undefined ? { fileUrl: o.fileUrl } : {}) }
    const skipTo = o.after?.c === folder && o.after.d === day && typeof o.after.i === 'number' ? o.after.i : -1
    const sorted = sortDay(await items)
    const rows: PositionedRow<LegacyMessage>[] = []
    for (let i = skipTo + 1; i < sorted.length; i++) {
      const row = rowOf(o.since, ctx, folder, day, sorted, i)
      if (row !== undefined) {
        rows.push(row)
      }
    }
    yield rows
  }
}

function rowOf(since: number | undefined, ctx: MessageContext | undefined, folder: string, day: string, sorted: ParsedItem[], i: number) {
  const conv = ctx?.conversation
  const item = sorted[i] as ParsedItem
  const pos = { c: folder, d: day, i }
  const where = `${folder}/${day}#${item.index}`
  const ts = tsOf(item)
  const legacyId = conv !== undefined && ts !== undefined ? `${conv.id}:${ts}` : `${conv?.id ?? folder}/${day}#${item.index}`
  if (!('value' in item)) {
    return { pos, row: problem(legacyId, 'file', `${where}: ${item.error}`) }
  }
  if (conv === undefined || ctx === undefined) {
    return { pos, row: problem(legacyId, 'channel', `folder ${folder} is no conversation of channels.json, groups.json, mpims.json or dms.json`) }
  }
  if (ts === undefined) {
    return { pos, row: problem(legacyId, 'ts', `${where}: the message has no valid ts ("seconds.micros")`) }
  }
  const previous = i > 0 ? tsOf(sorted[i - 1] as ParsedItem) : undefined
  if (previous === ts) {
    return { pos, row: problem(legacyId, 'ts', `${where}: a second message with ts ${ts} in ${folder}/${day}: the first is read`, where) }
  }
  const row = decodeRow(legacyId, () => decodeMessage(item.value, ctx))
  // A delta keeps the messages changed since; a row that cannot be read is reported on every read.
  const changed = row.ok ? (row.record.updatedAt ?? row.record.sentAt) : undefined
  if (since !== undefined && changed !== undefined && changed < since) {
    return undefined
  }
  return { pos, row, ...(changed !== undefined ? { changedAt: changed } : {}) }
}
