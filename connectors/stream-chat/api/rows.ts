/**
 * The rows of each entity over the Stream Chat REST API, each with the cursor a read resumes after:
 * - users: Query Users sorted by id, paged by `id $gt` the last one (`{id}`);
 * - groups: the session's channel list, by index (`{n}`), one-to-one channels skipped;
 * - members: per channel, those Query Channels returned when they are all of them (`member_count`),
 *   else Query Members by offset (`{c, k}`);
 * - messages: per channel, oldest first, pages of top-level messages (`created_at_after_or_equal`
 *   the start, then `id_gt` the page's last), each followed by its thread's replies (Get Replies,
 *   paged by `id_gt`); a cursor names the channel, the page's start and how many rows of that page
 *   were read (`{c, gt, k}`), so a resumed read fetches that page again and skips them.
 * Delta (`since`): users by `updated_at $gte`, groups and members by their change times, messages
 * created at or after `since` (README: what an API delta cannot see).
 */
import type { Cursor } from '../../../src/model/connector.ts'
import type { JsonObject, LegacyGroup, LegacyMember, LegacyMessage, LegacyUser } from '../../../src/model/records.ts'
import { type PositionedRow } from '../../rows/pages.ts'
import { decodeRow, problem } from '../../rows/problems.ts'
import { decodeChannel } from '../entities/channels.ts'
import { isObject, latest } from '../entities/fields.ts'
import { decodeMember, memberUserId } from '../entities/members.ts'
import { decodeMessage, messageChangedAt } from '../entities/messages.ts'
import { decodeUser } from '../entities/users.ts'
import type { StreamClient } from './client.ts'
import type { ApiChannel } from './directory.ts'

export interface ApiRowsSource {
  readonly client: StreamClient
  readonly channels: readonly ApiChannel[]
  readonly keepCustom: boolean
  readonly customChannelTypes: 'private' | 'public'
  readonly messagePageSize: number
}

export interface ApiRowsOptions {
  readonly after?: Cursor
  readonly since?: number
  readonly signal?: AbortSignal
}

const USERS_PAGE = 100
const MEMBERS_PAGE = 100
const REPLIES_PAGE = 300
const EPOCH = '1970-01-01T00:00:00Z'

const num = (c: Cursor | undefined, k: string): number => (typeof c?.[k] === 'number' ? c[k] : -1)
const sig = (o: ApiRowsOptions) => (o.signal ? { signal: o.signal } : {})
const inDelta = (changedAt: number | undefined, since: number | undefined) => since === undefined || (changedAt ?? -Infinity) >= since

export async function* apiUserRows(src: ApiRowsSource, o: ApiRowsOptions): AsyncGenerator<PositionedRow<LegacyUser>> {
  let last = typeof o.after?.id === 'string' ? o.after.id : undefined
  for (;;) {
    const filter: JsonObject = {
      ...(last !== undefined ? { id: { $gt: last } } : {}),
      ...(o.since !== undefined ? { updated_at: { $gte: new Date(o.since).toISOString() } } : {}),
    }
    const res = await src.client.call<{ users?: unknown[] }>('queryUsers', 'GET', '/users', {
      query: { payload: { filter_conditions: filter, sort: [{ field: 'id', direction: 1 }], limit: USERS_PAGE, presence: false } },
      ...sig(o),
    })
    const users = (res.users ?? []).filter(isObject)
    for (const u of users) {
      const id = typeof u.id === 'string' ? u.id : '?'
      const row = decodeRow(id, (out) => decodeUser(u, src.keepCustom, out))
      last = id
      yield { pos: { id }, row, ...(row.ok ? { changedAt: latest(row.record.updatedAt, row.record.createdAt) } : {}) } as PositionedRow<LegacyUser>
    }
    if (users.length < USERS_PAGE) {
      return
    }
  }
}

export async function* apiGroupRows(src: ApiRowsSource, o: ApiRowsOptions): AsyncGenerator<PositionedRow<LegacyGroup>> {
  const policy = { customChannelTypes: src.customChannelTypes, keepCustom: src.keepCustom }
  for (let n = num(o.after, 'n') + 1; n < src.channels.length; n++) {
    const c = src.channels[n] as ApiChannel
    if (c.problem !== undefined) {
      yield { pos: { n }, row: problem('?', c.problem.field, c.problem.reason, `channel ${n}`) }
      continue
    }
    if (c.target?.pair !== undefined) {
      continue
    }
    const ids = c.members.flatMap((m) => (typeof m.user_id === 'string' ? [m.user_id] : []))
    // A group DM without a name is named by its members: those Query Channels returned (up to 100).
    if (typeof c.value.member_count === 'number' && c.value.member_count > ids.length) {
      ids.push('…')
    }
    const row = decodeRow(c.cid ?? '?', (out) => decodeChannel(c.value, ids, policy, out))
    const changedAt = row.ok ? latest(row.record.updatedAt, row.record.createdAt) : undefined
    if (!row.ok || inDelta(changedAt, o.since)) {
      yield { pos: { n }, row, ...(changedAt !== undefined ? { changedAt } : {}) }
    }
  }
}

/** A channel's members from offset `from`: the ones Query Channels returned, or Query Members pages. */
async function* channelMembers(src: ApiRowsSource, c: ApiChannel, from: number, o: ApiRowsOptions): AsyncGenerator<JsonObject> {
  const count = typeof c.value.member_count === 'number' ? c.value.member_count : undefined
  if (count === undefined || count <= c.members.length) {
    yield* c.members.slice(from)
    return
  }
  const [type, id] = [c.value.type, c.value.id]
  for (let offset = from; ; offset += MEMBERS_PAGE) {
    const res = await src.client.call<{ members?: unknown[] }>('queryMembers', 'GET', '/members', {
      query: { payload: { type, id, filter_conditions: {}, sort: [{ field: 'created_at', direction: 1 }], limit: MEMBERS_PAGE, offset } },
      ...sig(o),
    })
    const page = (res.members ?? []).filter(isObject)
    yield* page
    if (page.length < MEMBERS_PAGE) {
      return
    }
  }
}

export async function* apiMemberRows(src: ApiRowsSource, o: ApiRowsOptions): AsyncGenerator<PositionedRow<LegacyMember>> {
  const startC = Math.max(num(o.after, 'c'), 0)
  for (let c = startC; c < src.channels.length; c++) {
    const ch = src.channels[c] as ApiChannel
    const cid = ch.cid
    if (cid === undefined || ch.problem !== undefined || ch.target?.pair !== undefined) {
      continue
    }
    let k = c === startC ? num(o.after, 'k') + 1 : 0
    for await (const m of channelMembers(src, ch, k, o)) {
      let uid = '?'
      try {
        uid = memberUserId(m)
      } catch {
        // decodeRow reports it
      }
      const row = decodeRow(`${cid}/${uid}`, () => decodeMember(cid, m))
      const changedAt = row.ok ? latest(row.record.updatedAt, row.record.joinedAt) : undefined
      if (!row.ok || inDelta(changedAt, o.since)) {
        yield { pos: { c, k }, row, ...(changedAt !== undefined ? { changedAt } : {}) }
      }
      k++
    }
  }
}

interface MessagesResponse {
  readonly messages?: unknown[]
}

/** One page of a channel's top-level messages with each one's replies: the raw messages in order. */
async function* pageWithReplies(src: ApiRowsSource, top: readonly JsonObject[], o: ApiRowsOptions): AsyncGenerator<JsonObject> {
  for (const m of top) {
    yield m
    if (typeof m.reply_count !== 'number' || m.reply_count <= 0 || typeof m.id !== 'string') {
      continue
    }
    let gt: string | undefined
    for (;;) {
      const res = await src.client.call<MessagesResponse>('getReplies', 'GET', `/messages/${encodeURIComponent(m.id)}/replies`, {
        query: { limit: String(REPLIES_PAGE), ...(gt !== undefined ? { id_gt: gt } : { created_at_after_or_equal: EPOCH }) },
        ...sig(o),
      })
      const replies = (res.messages ?? []).filter(isObject)
      yield* replies
      const last = replies.at(-1)?.id
      if (replies.length < REPLIES_PAGE || typeof last !== 'string') {
        break
      }
      gt = last
    }
  }
}

export async function* apiMessageRows(src: ApiRowsSource, o: ApiRowsOptions): AsyncGenerator<PositionedRow<LegacyMessage>> {
  const startC = Math.max(num(o.after, 'c'), 0)
  const start = o.since !== undefined ? new Date(o.since).toISOString() : EPOCH
  for (let c = startC; c < src.channels.length; c++) {
    const ch = src.channels[c] as ApiChannel
    if (ch.cid === undefined || ch.target === undefined) {
      continue
    }
    const target = ch.target
    let gt: string | null = c === startC && typeof o.after?.gt === 'string' ? o.after.gt : null
    let skip = c === startC ? num(o.after, 'k') + 1 : 0
    for (;;) {
      o.signal?.throwIfAborted()
      const [type, id] = [ch.value.type as string, ch.value.id as string]
      const res = await src.client.call<MessagesResponse>(
        'getChannel',
        'POST',
        `/channels/${encodeURIComponent(type)}/${encodeURIComponent(id)}/query`,
        {
          body: {
            state: true,
            watch: false,
            presence: false,
            messages: { limit: src.messagePageSize, ...(gt !== null ? { id_gt: gt } : { created_at_after_or_equal: start }) },
          },
          ...sig(o),
        },
      )
      const page = (res.messages ?? []).filter(isObject)
      // Replies shown in the channel too come with their thread, once.
      const top = page.filter((m) => m.parent_id === undefined || m.parent_id === null || m.parent_id === '')
      let k = 0
      for await (const m of pageWithReplies(src, top, o)) {
        if (k >= skip) {
          const mid = typeof m.id === 'string' && m.id !== '' ? m.id : `${ch.cid}#?`
          const row = decodeRow(mid, (out) => decodeMessage(m, { channel: target, keepCustom: src.keepCustom }, out))
          const changedAt = row.ok ? messageChangedAt(row.record) : undefined
          yield { pos: { c, gt, k }, row, ...(changedAt !== undefined ? { changedAt } : {}) }
        }
        k++
      }
      skip = 0
      const last = page.at(-1)?.id
      if (page.length < src.messagePageSize || typeof last !== 'string') {
        break
      }
      gt = last
    }
  }
}
