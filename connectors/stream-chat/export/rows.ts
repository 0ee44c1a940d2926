/**
 * The rows of each entity of a Stream Chat export, numbered in one stable order: the layout's
 * problems of that entity first, then users in the order they first appear, channels (the
 * one-to-one ones skipped: they are no groups) and their members in file order, messages in file
 * order, streamed again from the file. A row numbered at or before `after` is not yielded; in
 * delta mode (`since`) only rows changed at or after it are (problems always are).
 */
import type { LegacyGroup, LegacyMember, LegacyMessage, LegacyUser } from '../../../src/model/records.ts'
import { type PositionedRow as NumberedRow } from '../../rows/pages.ts'
import { decodeRow, problem } from '../../rows/problems.ts'
import { decodeChannel } from '../entities/channels.ts'
import { latest } from '../entities/fields.ts'
import { decodeMember, memberUserId } from '../entities/members.ts'
import { decodeMessage, messageChangedAt } from '../entities/messages.ts'
import { decodeUser } from '../entities/users.ts'
import { type ExportEvent, exportEvents, type ExportFormat } from './events.ts'
import { cidOf, type Directory, type ExportDirectory, type LayoutProblem } from './layout.ts'

export interface RowsSource {
  readonly path: string
  readonly format: ExportFormat
  readonly maxElementBytes: number
  /** Read on first use: users only for a read of users. */
  readonly directory: ExportDirectory
  readonly keepCustom: boolean
  readonly customChannelTypes: 'private' | 'public'
}

export interface RowsOptions {
  readonly after: number
  readonly since?: number
  readonly signal?: AbortSignal
}

function* layoutProblems<T>(layout: Directory, entity: LayoutProblem['entity'], after: number): Generator<NumberedRow<T>> {
  let n = 0
  for (const p of layout.problems) {
    if (p.entity === entity) {
      if (n > after) {
        yield { pos: { n }, row: problem(p.legacyId, p.field, p.reason, p.instance) }
      }
      n++
    }
  }
}

const countOf = (layout: Directory, entity: LayoutProblem['entity']) => layout.problems.filter((p) => p.entity === entity).length

/** Keeps a row when it is a problem, or changed at or after `since`. */
const inDelta = <T>(r: NumberedRow<T>, since: number | undefined) => since === undefined || !r.row.ok || (r.changedAt ?? -Infinity) >= since

export async function* userRows(src: RowsSource, o: RowsOptions): AsyncGenerator<NumberedRow<LegacyUser>> {
  const layout = await src.directory.layout()
  yield* layoutProblems<LegacyUser>(layout, 'users', o.after)
  let n = countOf(layout, 'users')
  for (const [id, u] of layout.users) {
    if (n > o.after) {
      const row = decodeRow(id, (out) => decodeUser(u.value, src.keepCustom, out))
      const r = { pos: { n }, row, ...(row.ok ? { changedAt: latest(row.record.updatedAt, row.record.createdAt) } : {}) } as NumberedRow<LegacyUser>
      if (inDelta(r, o.since)) {
        yield r
      }
    }
    n++
  }
}

export async function* groupRows(src: RowsSource, o: RowsOptions): AsyncGenerator<NumberedRow<LegacyGroup>> {
  const layout = await src.directory.directory()
  yield* layoutProblems<LegacyGroup>(layout, 'groups', o.after)
  let n = countOf(layout, 'groups')
  const policy = { customChannelTypes: src.customChannelTypes, keepCustom: src.keepCustom }
  for (const c of layout.channels) {
    const pair = c.cid === undefined ? undefined : layout.targets.get(c.cid)?.pair
    if (c.problem === undefined && pair !== undefined) {
      continue // a one-to-one conversation: no group
    }
    if (n > o.after) {
      if (c.problem !== undefined || c.value === undefined) {
        yield { pos: { n }, row: problem(c.cid ?? '?', c.problem?.field ?? 'channel', c.problem?.reason ?? 'unreadable', c.where) }
      } else {
        const value = c.value
        const memberIds = c.members.flatMap((m) => (typeof m.value.user_id === 'string' ? [m.value.user_id] : []))
        const row = decodeRow(c.cid ?? '?', (out) => decodeChannel(value, memberIds, policy, out))
        const r = {
          pos: { n },
          row,
          ...(row.ok ? { changedAt: latest(row.record.updatedAt, row.record.createdAt) } : {}),
        } as NumberedRow<LegacyGroup>
        if (inDelta(r, o.since)) {
          yield r
        }
      }
    }
    n++
  }
}

export async function* memberRows(src: RowsSource, o: RowsOptions): AsyncGenerator<NumberedRow<LegacyMember>> {
  const layout = await src.directory.directory()
  yield* layoutProblems<LegacyMember>(layout, 'members', o.after)
  let n = countOf(layout, 'members')
  for (const c of layout.channels) {
    const cid = c.cid
    if (cid === undefined || c.problem !== undefined || layout.targets.get(cid)?.pair !== undefined) {
      continue
    }
    const seen = new Set<string>()
    for (const m of c.members) {
      if (n > o.after) {
        let uid = '?'
        try {
          uid = memberUserId(m.value)
        } catch {
          // decodeRow reports it
        }
        const row = seen.has(uid)
          ? problem(`${cid}/${uid}`, 'user_id', `${uid} is a member of ${cid} twice; the first is read`, m.where)
          : decodeRow(`${cid}/${uid}`, () => decodeMember(cid, m.value))
        const r = {
          pos: { n },
          row,
          ...(row.ok ? { changedAt: latest(row.record.updatedAt, row.record.joinedAt) } : {}),
        } as NumberedRow<LegacyMember>
        if (inDelta(r, o.since)) {
          yield r
        }
      }
      try {
        seen.add(memberUserId(m.value))
      } catch {
        // not a member
      }
      n++
    }
  }
}

/**
 * The message rows, a batch per chunk of the file (no async step per row: a row is a few
 * microseconds of work, an async generator's step per row would add a good part of that).
 */
export async function* messageRows(src: RowsSource, o: RowsOptions): AsyncGenerator<NumberedRow<LegacyMessage>[]> {
  const layout = await src.directory.directory()
  const problems = [...layoutProblems<LegacyMessage>(layout, 'messages', o.after)]
  if (problems.length > 0) {
    yield problems
  }
  let n = countOf(layout, 'messages')
  if (n + layout.messageCount - 1 <= o.after) {
    return // nothing after the cursor: the file is not read again
  }
  for await (const batch of exportEvents(src.path, src.format, src.maxElementBytes)) {
    o.signal?.throwIfAborted()
    const out: NumberedRow<LegacyMessage>[] = []
    for (const e of batch) {
      if (e.kind !== 'entity' || e.entity !== 'message') {
        if (e.kind === 'bad' && e.entity === 'message') {
          if (n > o.after) {
            out.push({ pos: { n }, row: problem(e.where, e.field ?? 'message', e.reason, e.where) })
          }
          n++
        }
        continue
      }
      if (n > o.after) {
        const r = messageRow(src, layout, e, n)
        if (inDelta(r, o.since)) {
          out.push(r)
        }
      }
      n++
    }
    if (out.length > 0) {
      yield out
    }
  }
}

/** The row of the message entity `e`, numbered `n`. */
function messageRow(src: RowsSource, layout: Directory, e: ExportEvent & { kind: 'entity' }, n: number): NumberedRow<LegacyMessage> {
  const v = e.value
  const id = typeof v.id === 'string' && v.id !== '' ? v.id : e.where
  const cid = cidOf(v) ?? layout.cidByExport.get(e.exportIndex)
  const channel = cid === undefined ? undefined : layout.targets.get(cid)
  if (channel === undefined) {
    return { pos: { n }, row: problem(id, 'cid', `the message's channel ${cid ?? '(none)'} is not in the export`) }
  }
  // No spread here: this runs once a row (`reactions: undefined` reads as none).
  const ctx = { channel, keepCustom: src.keepCustom, reactions: typeof v.id === 'string' ? layout.reactions.get(v.id) : undefined }
  const row = decodeRow(id, (out) => decodeMessage(v, ctx, out))
  return row.ok ? { pos: { n }, row, changedAt: messageChangedAt(row.record) } : { pos: { n }, row }
}
