/**
 * The messages entity: every conversation folder (sorted by name), its day files (sorted by date),
 * each file's messages sorted by `ts`. Position: `{c, d, i}` (folder, day file, index in the sorted
 * file). A small day file is parsed whole, a large one streamed (day-sort.ts); a `ts` repeated in
 * a later day file of the conversation is a problem naming both files, the first copy is read
 * (conversation-ts.ts).
 */
import type { Cursor, RowProblem } from '../../src/model/connector.ts'
import type { LegacyMessage } from '../../src/model/records.ts'
import type { ExportArchive } from '../archive/archive.ts'
import { type ParsedItem, readsWhole } from '../archive/array-file.ts'
import { type PositionedRow } from '../rows/pages.ts'
import { decodeRow, problem } from '../rows/problems.ts'
import { ConversationTs } from './conversation-ts.ts'
import { sortedDay, tsOf } from './day-sort.ts'
import type { TextLookups } from './entities/message-text.ts'
import { type Conversation, decodeMessage, type MessageContext } from './entities/messages.ts'
import { slackFileLocator } from './files-locator.ts'
import type { Layout } from './layout.ts'
import { DAY_FILE } from './layout.ts'

export interface MessagesRead {
  readonly archive: ExportArchive
  readonly layout: Layout
  readonly lookups: TextLookups
  readonly fileUrl?: string
  /** Whether `source.fileToken` is set: `url_private` then gets a locator (files-locator.ts). */
  readonly hasFileToken?: boolean
  readonly maxElementBytes: number
  readonly after?: Cursor
  readonly since?: number
  readonly signal?: AbortSignal
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

/**
 * A day file being read: a small one is read whole at once, its failure kept for when it is
 * awaited (not an unhandled rejection meanwhile), so the next file is read while this one's rows
 * are decoded; a large one is streamed when its turn comes.
 */
function startReading(o: MessagesRead, file: { folder: string; day: string } | undefined) {
  if (file === undefined) {
    return undefined
  }
  const path = `${file.folder}/${file.day}`
  if (!readsWhole(o.archive, path, o.maxElementBytes)) {
    return { ...file, batches: () => sortedDay(o.archive, path, o.maxElementBytes) }
  }
  let whole: Promise<IteratorResult<ParsedItem[]>> | undefined = sortedDay(o.archive, path, o.maxElementBytes).next()
  whole.catch(() => {})
  async function* batches() {
    // The closure lets go of the promise before awaiting it. While the closure held the settled
    // promise, V8's young-generation collections found the file's parsed items alive for longer
    // than the file's turn and moved them to the old generation, which grew until a full
    // collection (peak RSS growing with the export). Measured on 100k messages: 28 MB promoted
    // from the young generation before, 5 MB after.
    const pending = whole
    whole = undefined
    const r = await pending
    if (r !== undefined && !r.done) {
      yield r.value
    }
  }
  return { ...file, batches }
}

/**
 * The rows of each day file, one array per file (per batch of a large file). The next small file
 * is read while this one's rows are decoded and used, so the disk and the CPU overlap.
 */
export async function* messageRows(o: MessagesRead): AsyncGenerator<PositionedRow<LegacyMessage>[]> {
  const files = dayFiles(o)
  let next = startReading(o, files.next().value ?? undefined)
  let seen: ConversationTs | undefined
  let seenFolder: string | undefined
  while (next !== undefined) {
    o.signal?.throwIfAborted()
    const { folder, day, batches } = next
    next = startReading(o, files.next().value ?? undefined)
    if (seenFolder !== folder || seen === undefined) {
      seen = new ConversationTs(o.archive, folder, o.maxElementBytes)
      seenFolder = folder
      if (o.after?.c === folder && typeof o.after.d === 'string') {
        const before = o.after.d
        await seen.readBefore(o.archive.filesIn(folder).filter((f) => DAY_FILE.test(f) && f < before))
      }
    }
    seen.startDay(day)
    const conv = o.layout.byFolder.get(folder)
    const ctx: MessageContext | undefined = conv && {
      ...o.lookups,
      conversation: conv,
      ...(o.fileUrl !== undefined ? { fileUrl: o.fileUrl } : {}),
      locateFile: slackFileLocator(o.archive, folder, o.hasFileToken === true),
    }
    const skipTo = o.after?.c === folder && o.after.d === day && typeof o.after.i === 'number' ? o.after.i : -1
    let rank = 0
    let previous: string | undefined
    for await (const batch of batches()) {
      const rows: PositionedRow<LegacyMessage>[] = []
      for (const item of batch) {
        const i = rank++
        const ts = tsOf(item)
        const found = seen.firstDayOf(ts)
        const firstDay = found instanceof Promise ? await found : found
        if (i > skipTo) {
          const row = rowOf(o.since, ctx, { folder, day, i, item, ts, previous, firstDay })
          if (row !== undefined) {
            rows.push(row)
          }
        }
        previous = ts
      }
      yield rows
    }
  }
}

interface At {
  readonly folder: string
  readonly day: string
  /** The item's place in the sorted file. */
  readonly i: number
  readonly item: ParsedItem
  /** Its valid `ts`, if any. */
  readonly ts: string | undefined
  /** The `ts` of the item before it in the sorted file. */
  readonly previous: string | undefined
  /** The earlier day file of the conversation that had this `ts` first. */
  readonly firstDay: string | undefined
}

function rowOf(since: number | undefined, ctx: MessageContext | undefined, at: At) {
  const { folder, day, i, item, ts } = at
  const conv = ctx?.conversation
  const pos = { c: folder, d: day, i }
  const legacyId = conv !== undefined && ts !== undefined ? `${conv.id}:${ts}` : `${conv?.id ?? folder}/${day}#${item.index}`
  const bad = problemOf(at, legacyId, conv)
  // problemOf answers for an item without a value and for a folder that is no conversation (no ctx).
  if (bad !== undefined || ctx === undefined || !('value' in item)) {
    return { pos, row: bad as RowProblem }
  }
  const row = decodeRow(legacyId, () => decodeMessage(item.value, ctx))
  // A delta keeps the messages changed since; a row that cannot be read is reported on every read.
  const changed = row.ok ? (row.record.updatedAt ?? row.record.sentAt) : undefined
  if (since !== undefined && changed !== undefined && changed < since) {
    return undefined
  }
  return { pos, row, ...(changed !== undefined ? { changedAt: changed } : {}) }
}

/** The item's position in the export, for problems (built only for them, not for every row). */
const whereOf = (at: At) => `${at.folder}/${at.day}#${at.item.index}`

/** Why an item of a day file is a problem row rather than a message, if it is one. */
function problemOf(at: At, legacyId: string, conv: Conversation | undefined): RowProblem | undefined {
  const { folder, day, item, ts, firstDay } = at
  if (!('value' in item)) {
    return problem(legacyId, 'file', `${whereOf(at)}: ${item.error}`)
  }
  if (conv === undefined) {
    return problem(legacyId, 'channel', `folder ${folder} is no conversation of channels.json, groups.json, mpims.json or dms.json`)
  }
  if (conv.refused !== undefined) {
    return problem(legacyId, 'channel', `${whereOf(at)}: its conversation ${conv.id} was not read (${conv.refused})`, whereOf(at))
  }
  if (ts === undefined) {
    return problem(legacyId, 'ts', `${whereOf(at)}: the message has no valid ts ("seconds.micros")`)
  }
  if (at.previous === ts) {
    return problem(legacyId, 'ts', `${whereOf(at)}: a second message with ts ${ts} in ${folder}/${day}: the first is read`, whereOf(at))
  }
  if (firstDay !== undefined) {
    return problem(
      legacyId,
      'ts',
      `${whereOf(at)}: a message with ts ${ts} is in ${folder}/${firstDay} too: the first, in ${folder}/${firstDay}, is read`,
      whereOf(at),
    )
  }
  return undefined
}
