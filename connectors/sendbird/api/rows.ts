/**
 * The rows of each entity over the Platform API, each with its position (the connector's cursor):
 * - users: `GET /users` (`active_mode=all`: deactivated users too) — `{t, i}`;
 * - groups: `GET /group_channels` (`show_member`, `show_empty`, `show_frozen`, chronological), then
 *   `GET /open_channels` — `{k: 0|1, t, i}` (`k` the list, `t`/`i` the page token and index);
 * - members: per channel of that order, `GET /group_channels/{url}/members` (role `operator` →
 *   admin) or an open channel's `operators` — `{k, t, i, mt, mi}`;
 * - messages: per channel (one-to-one channels too), `GET /{type}/{url}/messages` from
 *   `message_ts` (0, or the delta's `since`) on, then from the last `message_id` read, 200 at a time,
 *   replies included — `{k, t, i, m, s, n}` (`m` the last message id read, `s` its time, `n` the
 *   rows after it that have no id).
 */
import type { Cursor, SourceRow } from '../../../src/model/connector.ts'
import type { EpochMs, LegacyGroup, LegacyMember, LegacyMessage, LegacyUser } from '../../../src/model/records.ts'
import { at, type PositionedRow } from '../../rows/pages.ts'
import { type ChannelShape, channelShape, sendbirdGroup } from '../entities/channels.ts'
import { channelMembers } from '../entities/members.ts'
import { messageIdOf, sendbirdMessage } from '../entities/messages.ts'
import { sendbirdUser } from '../entities/users.ts'
import { decoded } from '../export/rows.ts'
import { isObject, str } from '../fields.ts'
import { type SendbirdClient, SendbirdNotFound } from './client.ts'
import { LIST_LIMIT, listItems } from './listing.ts'
import { flat, readAhead } from './read-ahead.ts'

/** Messages per request: the most `next_limit` allows. */
export const MESSAGE_LIMIT = 200

export interface ApiRead {
  readonly client: SendbirdClient
  readonly after?: Cursor | undefined
  readonly since?: EpochMs | undefined
  readonly signal?: AbortSignal | undefined
}

const tok = (c: Cursor | undefined, key: string): string => (typeof c?.[key] === 'string' ? (c[key] as string) : '')

export async function* userRows(r: ApiRead): AsyncGenerator<PositionedRow<LegacyUser>[]> {
  for await (const page of listItems({
    client: r.client,
    path: 'users',
    key: 'users',
    query: { active_mode: 'all', show_bot: true, order: 'user_id' },
    token: tok(r.after, 't'),
    afterIndex: at(r.after, 'i'),
    signal: r.signal,
  })) {
    yield page.map(({ token, index, value }) => ({
      pos: { t: token, i: index },
      row: decoded(isObject(value) ? (str(value.user_id) ?? '?') : '?', `users#${token}#${index}`, (out) => sendbirdUser(value, out)),
    }))
  }
}

/** The two lists of channels. */
const LISTS = [
  {
    k: 0,
    path: 'group_channels',
    type: 'group_channels',
    query: { show_member: true, show_empty: true, show_frozen: true, order: 'chronological', public_mode: 'all', super_mode: 'all' },
  },
  { k: 1, path: 'open_channels', type: 'open_channels', query: { show_frozen: true } },
] as const

interface ChannelAt {
  readonly pos: { k: number; t: string; i: number }
  readonly value: unknown
  /** Its shape, or the problem it is (reported by the groups read). */
  readonly shape: SourceRow<ChannelShape>
  readonly type: string
}

/** Every channel from a cursor's channel on (that channel included when `inclusive`). */
async function* channels(r: ApiRead, inclusive: boolean): AsyncGenerator<ChannelAt[]> {
  const startK = Math.max(0, at(r.after, 'k'))
  for (const list of LISTS.slice(startK)) {
    const resume = list.k === startK && r.after !== undefined
    const afterIndex = resume ? at(r.after, 'i') - (inclusive ? 1 : 0) : -1
    for await (const page of listItems({
      client: r.client,
      path: list.path,
      key: 'channels',
      query: list.query,
      token: resume ? tok(r.after, 't') : '',
      afterIndex,
      signal: r.signal,
    })) {
      yield page.map(({ token, index, value }) => ({
        pos: { k: list.k, t: token, i: index },
        value,
        type: list.type,
        shape: decoded(isObject(value) ? (str(value.channel_url) ?? '?') : '?', `${list.path}#${token}#${index}`, () => {
          const shape = channelShape(value)
          return list.k === 1 ? { url: shape.url, open: true } : shape
        }),
      }))
    }
  }
}

export async function* groupRows(r: ApiRead): AsyncGenerator<PositionedRow<LegacyGroup>[]> {
  for await (const batch of channels(r, false)) {
    yield batch.flatMap(({ pos, value, shape }) => {
      if (!shape.ok) {
        return [{ pos, row: shape as SourceRow<LegacyGroup> }]
      }
      return shape.record.direct !== undefined
        ? []
        : [{ pos, row: decoded(shape.record.url, '', (out) => sendbirdGroup(value as Record<string, unknown>, shape.record, out)) }]
    })
  }
}

const sameChannel = (c: Cursor | undefined, pos: ChannelAt['pos']) =>
  c !== undefined && at(c, 'k') === pos.k && tok(c, 't') === pos.t && at(c, 'i') === pos.i

export async function* memberRows(r: ApiRead): AsyncGenerator<PositionedRow<LegacyMember>[]> {
  const withMembers = async function* () {
    for await (const ch of flat(channels(r, true))) {
      if (ch.shape.ok && ch.shape.record.direct === undefined) {
        yield ch
      }
    }
  }
  yield* readAhead(withMembers(), (ch) => channelMemberRows(r, ch))
}

async function* channelMemberRows(r: ApiRead, ch: ChannelAt): AsyncGenerator<PositionedRow<LegacyMember>[]> {
  const { url, open } = (ch.shape as { record: ChannelShape }).record
  const o = ch.value as Record<string, unknown>
  const resume = sameChannel(r.after, ch.pos)
  if (open) {
    const skip = resume ? at(r.after, 'mi') : -1
    const rows = channelMembers(url, [], Array.isArray(o.operators) ? o.operators : []).map((row, mi) => ({
      pos: { ...ch.pos, mt: '', mi },
      row,
    }))
    yield rows.filter((x) => x.pos.mi > skip)
    return
  }
  // Members come a page at a time; operators are members with `role: operator`. A user listed
  // twice is one member and a problem for the second entry (found within one read of the
  // channel: memory in the members of one channel).
  const seen = new Set<string>()
  try {
    for await (const page of listItems({
      client: r.client,
      path: `group_channels/${encodeURIComponent(url)}/members`,
      key: 'members',
      query: {},
      token: resume ? tok(r.after, 'mt') : '',
      afterIndex: resume ? at(r.after, 'mi') : -1,
      signal: r.signal,
    })) {
      yield page.map(({ token, index, value }) => {
        const row = channelMembers(url, [value], [])[0] as SourceRow<LegacyMember>
        const pos = { ...ch.pos, mt: token, mi: index }
        if (row.ok && seen.has(row.record.userId)) {
          const reason = `channel ${url} lists member ${row.record.userId} twice`
          return {
            pos,
            row: { ok: false, legacyId: `${url}/${row.record.userId}`, field: 'user_id', reason, instance: `${token}#${index}` } as const,
          }
        }
        if (row.ok) {
          seen.add(row.record.userId)
        }
        return { pos, row }
      })
    }
  } catch (err) {
    if (!(err instanceof SendbirdNotFound)) {
      throw err
    }
    // Deleted since it was listed: it has no members any more.
  }
}

export async function* messageRows(r: ApiRead): AsyncGenerator<PositionedRow<LegacyMessage>[]> {
  const readable = async function* () {
    for await (const ch of flat(channels(r, true))) {
      if (ch.shape.ok) {
        yield ch
      }
    }
  }
  yield* readAhead(readable(), async function* (ch) {
    const shape = (ch.shape as { record: ChannelShape }).record
    const from: MessagePlace = sameChannel(r.after, ch.pos) ? placeOf(r.after) : { n: 0 }
    try {
      yield* channelMessages(r, ch, from, (url) => (url === shape.url ? shape.direct : undefined))
    } catch (err) {
      if (!(err instanceof SendbirdNotFound)) {
        throw err
      }
      // The channel was deleted since it was listed: nothing more to read of it.
    }
  })
}

/**
 * Where a channel's messages stand: the last message with a readable id (`m`, its `created_at` in
 * `s`) and how many rows came after it (`n`: messages without a usable id, which cannot be paged by).
 */
interface MessagePlace {
  readonly m?: string
  readonly s?: number
  readonly n: number
}

const placeOf = (c: Cursor | undefined): MessagePlace => ({
  ...(typeof c?.m === 'string' ? { m: c.m } : {}),
  ...(typeof c?.s === 'number' ? { s: c.s } : {}),
  n: typeof c?.n === 'number' ? c.n : 0,
})

const QUERY = {
  prev_limit: 0,
  next_limit: MESSAGE_LIMIT,
  include_reply_type: 'all',
  include_reactions: true,
  with_sorted_meta_array: true,
  include_thread_info: true,
}

/**
 * One channel's messages from a place: after message `m` (`message_id`, not included); when that
 * message is gone (deleted since), from its time `s` (`message_ts`, included) less the messages at
 * that time up to `m`; without `m`, from the start (or the delta's `since`). Then `n` rows skipped.
 */
async function* channelMessages(
  r: ApiRead,
  ch: ChannelAt,
  from: MessagePlace,
  directOf: (url: string) => readonly [string, string] | undefined,
): AsyncGenerator<PositionedRow<LegacyMessage>[]> {
  const url = (ch.shape as { record: ChannelShape }).record.url
  const path = `${ch.type}/${encodeURIComponent(url)}/messages`
  // Rows without an id count from the last message with one: the first page starts right after it.
  let place: MessagePlace = { ...from, n: 0 }
  let skip = from.n
  let { messages, full } = await firstPage(r, path, from)
  for (;;) {
    const rows = messages.map((value) => {
      const id = messageIdOf(value)
      const row = decoded(id, `${url}#${id}`, (out) =>
        sendbirdMessage(isObject(value) && value.channel_url === undefined ? { ...value, channel_url: url } : value, directOf, out),
      )
      const created = isObject(value) && typeof value.created_at === 'number' ? value.created_at : undefined
      place = id !== '?' ? { m: id, ...(created !== undefined ? { s: created } : {}), n: 0 } : { ...place, n: place.n + 1 }
      return { pos: { ...ch.pos, ...place }, row, ...(row.ok ? { changedAt: row.record.sentAt } : {}) }
    })
    yield rows.slice(skip)
    if (!full || place.m === undefined) {
      return
    }
    // The next page from the last message with an id (rows after it on this page are skipped again).
    skip = place.n
    messages = await page(r, path, { message_id: place.m, include: false })
    full = messages.length >= MESSAGE_LIMIT
  }
}

async function page(r: ApiRead, path: string, ref: Record<string, string | number | boolean>): Promise<unknown[]> {
  const answer = await r.client.get(path, { ...ref, ...QUERY }, r.signal)
  return Array.isArray(answer.messages) ? answer.messages : []
}

/** The first page from a place, and whether it was full (more may follow). */
async function firstPage(r: ApiRead, path: string, from: MessagePlace): Promise<{ messages: unknown[]; full: boolean }> {
  const whole = (messages: unknown[]) => ({ messages, full: messages.length >= MESSAGE_LIMIT })
  if (from.m === undefined) {
    return whole(await page(r, path, { message_ts: r.since ?? 0, include: true }))
  }
  try {
    return whole(await page(r, path, { message_id: from.m, include: false }))
  } catch (err) {
    if (!(err instanceof SendbirdNotFound) || from.s === undefined) {
      throw err
    }
    // The message was deleted since: read from its time, past the messages of that time up to it.
    const at = await page(r, path, { message_ts: from.s, include: true })
    return {
      messages: at.filter((v) => !(isObject(v) && v.created_at === from.s && Number(v.message_id) <= Number(from.m))),
      full: at.length >= MESSAGE_LIMIT,
    }
  }
}

export { LIST_LIMIT }
