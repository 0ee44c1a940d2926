/**
 * The rows of each entity from a Data Export, each with its position (the cursor): the file's
 * index among the data type's files (`f`), the record's index in it (`e`) and, for members, the
 * member's index in its channel (`m`). Reading from a cursor skips what lies at or before it.
 */
import type { Cursor, SourceRow } from '../../../src/model/connector.ts'
import type { EpochMs, LegacyGroup, LegacyMember, LegacyMessage, LegacyUser } from '../../../src/model/records.ts'
import { OutcomeList } from '../../rows/outcomes.ts'
import { at, type PositionedRow } from '../../rows/pages.ts'
import { channelShape, sendbirdGroup } from '../entities/channels.ts'
import { channelMembers } from '../entities/members.ts'
import { type DirectOf, messageIdOf, sendbirdMessage } from '../entities/messages.ts'
import { sendbirdUser } from '../entities/users.ts'
import { FieldProblem, isObject, str } from '../fields.ts'
import { type DataFile, type FileItem, fileItems } from './files.ts'

export interface ReadFrom {
  readonly files: readonly DataFile[]
  readonly csvDelimiter: string
  readonly maxElementBytes: number
  readonly after?: Cursor | undefined
  readonly since?: EpochMs | undefined
  readonly signal?: AbortSignal | undefined
}

/**
 * A record's row with the policy outcomes its decoding noted in `out`, or the problem its decoding
 * raised (a FieldProblem names the field).
 */
export function decoded<T>(legacyId: string, instance: string, decode: (out: OutcomeList) => T): SourceRow<T> {
  const out = new OutcomeList()
  try {
    const record = decode(out)
    return out.list === undefined ? { ok: true, record } : { ok: true, record, outcomes: out.list }
  } catch (err) {
    if (err instanceof FieldProblem) {
      return { ok: false, legacyId, field: err.field, reason: err.message, instance }
    }
    throw err
  }
}

/**
 * Every item of the files from the cursor's file on, a batch of one file at a time (items before the
 * cursor's are skipped; the cursor's own is kept, for the members after it).
 */
async function* items(r: ReadFrom): AsyncGenerator<{ f: number; file: DataFile; items: FileItem[] }> {
  const startFile = Math.max(0, at(r.after, 'f'))
  for (let f = startFile; f < r.files.length; f++) {
    const file = r.files[f] as DataFile
    const skipTo = f === startFile ? at(r.after, 'e') : -1
    for await (const batch of fileItems(file, r.csvDelimiter, r.maxElementBytes)) {
      r.signal?.throwIfAborted()
      const kept = skipTo < 0 ? batch : batch.filter((item) => item.index >= skipTo)
      if (kept.length > 0) {
        yield { f, file, items: kept }
      }
    }
  }
}

const brokenRow = <T>(file: DataFile, item: FileItem & { error: string }, field: string): SourceRow<T> => ({
  ok: false,
  legacyId: '?',
  field,
  reason: `record ${item.index} of ${file.label}: ${item.error}`,
  instance: `${file.path}#${item.index}`,
})

const after = (r: ReadFrom, f: number, e: number): boolean => f > at(r.after, 'f') || e > at(r.after, 'e')

export async function* userRows(r: ReadFrom): AsyncGenerator<PositionedRow<LegacyUser>[]> {
  for await (const { f, file, items: batch } of items(r)) {
    yield batch
      .filter((item) => after(r, f, item.index))
      .map((item) => ({
        pos: { f, e: item.index },
        row:
          'error' in item
            ? brokenRow(file, item, 'user')
            : decoded(isObject(item.value) ? (str(item.value.user_id) ?? '?') : '?', `${file.path}#${item.index}`, (out) =>
                sendbirdUser(item.value, out),
              ),
      }))
  }
}

export async function* groupRows(r: ReadFrom): AsyncGenerator<PositionedRow<LegacyGroup>[]> {
  for await (const { f, file, items: batch } of items(r)) {
    yield batch
      .filter((item) => after(r, f, item.index))
      .flatMap((item) => {
        const pos = { f, e: item.index }
        if ('error' in item) {
          return [{ pos, row: brokenRow<LegacyGroup>(file, item, 'channel') }]
        }
        const url = isObject(item.value) ? (str(item.value.channel_url) ?? '?') : '?'
        const row = decoded(url, `${file.path}#${item.index}`, () => channelShape(item.value))
        if (!row.ok) {
          return [{ pos, row: row as SourceRow<LegacyGroup> }]
        }
        // A one-to-one conversation is no group: its messages go to the other member.
        return row.record.direct !== undefined
          ? []
          : [{ pos, row: decoded(url, `${file.path}#${item.index}`, (out) => sendbirdGroup(item.value as Record<string, unknown>, row.record, out)) }]
      })
  }
}

export async function* memberRows(r: ReadFrom): AsyncGenerator<PositionedRow<LegacyMember>[]> {
  for await (const { f, items: batch } of items(r)) {
    yield batch.flatMap((item) => {
      if ('error' in item || at(r.after, 'f') > f || (at(r.after, 'f') === f && at(r.after, 'e') > item.index)) {
        return []
      }
      let shape
      try {
        shape = channelShape(item.value)
      } catch {
        return [] // the groups read reports the channel
      }
      if (shape.direct !== undefined) {
        return []
      }
      const o = item.value as Record<string, unknown>
      const members = shape.open ? [] : Array.isArray(o.members) ? o.members : []
      const operators = Array.isArray(o.operators) ? o.operators : []
      const skip = at(r.after, 'f') === f && at(r.after, 'e') === item.index ? at(r.after, 'm') : -1
      return channelMembers(shape.url, members, operators)
        .map((row, m) => ({ pos: { f, e: item.index, m }, row }))
        .filter(({ pos }) => pos.m > skip)
    })
  }
}

export async function* messageRows(r: ReadFrom, directOf: DirectOf): AsyncGenerator<PositionedRow<LegacyMessage>[]> {
  for await (const { f, file, items: batch } of items(r)) {
    const out: PositionedRow<LegacyMessage>[] = []
    for (const item of batch) {
      if (!after(r, f, item.index)) {
        continue
      }
      const pos = { f, e: item.index }
      if ('error' in item) {
        out.push({ pos, row: brokenRow(file, item, 'message') })
        continue
      }
      const row = messageRow(file, item.index, item.value, directOf)
      if (!row.ok) {
        out.push({ pos, row })
        continue
      }
      const changedAt = row.record.updatedAt ?? row.record.sentAt
      if (r.since === undefined || changedAt >= r.since) {
        out.push({ pos, row, changedAt })
      }
    }
    yield out
  }
}

/** One message's row; its id and instance are only spelled out for a problem. */
function messageRow(file: DataFile, index: number, value: unknown, directOf: DirectOf): SourceRow<LegacyMessage> {
  const out = new OutcomeList()
  try {
    const record = sendbirdMessage(value, directOf, out)
    return out.list === undefined ? { ok: true, record } : { ok: true, record, outcomes: out.list }
  } catch (err) {
    if (err instanceof FieldProblem) {
      return { ok: false, legacyId: messageIdOf(value), field: err.field, reason: err.message, instance: `${file.path}#${index}` }
    }
    throw err
  }
}
