/**
 * The rows of each entity over the Platform API, each with its position (the connector's cursor):
 * - users: `GET /users` (`active_mode=all`: deactivated users too) — `{t, i}`;
 * - groups: `GET /group_channels` (`show_member`, `show_empty`, `show_frozen`, chronological), then
 *   `GET /open_channels` — `{k: 0|1, t, i}` (`k` the list, `t`/`i` the page token and index);
 * - members: per channel of that order, `GET /group_channels/{url}/members` (role `operator` →
 *   admin) or an open channel's `operators` — `{k, t, i, mt, mi}`;
 * - messages: per channel (one-to-one channels too), `GET /{type}/{url}/messages` from
 *   `message_ts` (0, or the delta's `since`) on, then from the last `message_id` read, 200 at a time,
 *   replies included — `{k, t, i, m}` (`m` the last message id read).
 */
import type { Cursor, SourceRow } from '../../../src/model/connector.ts'
import type { EpochMs, LegacyGroup, LegacyMember, LegacyMessage, LegacyUser } from '../../../src/model/records.ts'
import { at, type PositionedRow } from '../../slack-export/paging.ts'
import { type ChannelShape, channelShape, sendbirdGroup } from '../entities/channels.ts'
import { channelMembers } from '../entities/members.ts'
import { messageIdOf, sendbirdMessage } from '../entities/messages.ts'
import { sendbirdUser } from '../entities/users.ts'
import { decoded } from '../export/rows.ts'
import { isObject, str } from '../fields.ts'
import { type SendbirdClient, SendbirdNotFound } from './client.ts'
import { LIST_LIMIT, listItems } from './listing.ts'

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
      row: decoded(isObject(value) ? (str(value.user_id) ?? '?') : '?', `users#${token}#${index}`, () => sendbirdUser(value)),
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
        : [{ pos, row: decoded(shape.record.url, '', () => sendbirdGroup(value as Record<string, unknown>, shape.record)) }]
    })
  }
}

const sameChannel = (c: Cursor | undefined, pos: ChannelAt['pos']) =>
  c !== undefined && at(c, 'k') === pos.k && tok(c, 't') === pos.t && at(c, 'i') === pos.i

export async function* memberRows(r: ApiRead): AsyncGenerator<PositionedRow<LegacyMember>[]> {
  for await (const batch of channels(r, true)) {
    for (const ch of batch) {
      if (!ch.shape.ok || ch.shape.record.direct !== undefined) {
        continue
      }
      const { url, open } = ch.shape.record
      const o = ch.value as Record<string, unknown>
      const resume = sameChannel(r.after, ch.pos)
      if (open) {
        const skip = resume ? at(r.after, 'mi') : -1
        const rows = channelMembers(url, [], Array.isArray(o.operators) ? o.operators : []).map((row, mi) => ({
          pos: { ...ch.pos, mt: '', mi },
          row,
        }))
        yield rows.filter((x) => x.pos.mi > skip)
        continue
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
              const legacyId = `${url}/${row.record.userId}`
              return {
                pos,
                row: {
                  ok: false,
                  legacyId,
                  field: 'user_id',
                  reason: `channel ${url} lists member ${row.record.userId} twice`,
                  instance: `${token}#${index}`,
                } as const,
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
  }
}

export async function* messageRows(r: ApiRead): AsyncGenerator<PositionedRow<LegacyMessage>[]> {
  for await (const batch of channels(r, true)) {
    for (const ch of batch) {
      if (!ch.shape.ok) {
        continue
      }
      const shape = ch.shape.record
      const direct = shape.direct
      const resume = sameChannel(r.after, ch.pos) ? str(r.after?.m) : undefined
      try {
        yield* channelMessages(r, ch, resume, (url) => (url === shape.url ? direct : undefined))
      } catch (err) {
        if (!(err instanceof SendbirdNotFound)) {
          throw err
        }
      }
    }
  }
}

async function* channelMessages(
  r: ApiRead,
  ch: ChannelAt,
  afterId: string | undefined,
  directOf: (url: string) => readonly [string, string] | undefined,
): AsyncGenerator<PositionedRow<LegacyMessage>[]> {
  const url = (ch.shape as { record: ChannelShape }).record.url
  let ref: Record<string, string | number | boolean> =
    afterId !== undefined ? { message_id: afterId, include: false } : { message_ts: r.since ?? 0, include: true }
  for (;;) {
    const answer = await r.client.get(
      `${ch.type}/${encodeURIComponent(url)}/messages`,
      {
        ...ref,
        prev_limit: 0,
        next_limit: MESSAGE_LIMIT,
        include_reply_type: 'all',
        include_reactions: true,
        with_sorted_meta_array: true,
        include_thread_info: true,
      },
      r.signal,
    )
    const messages = Array.isArray(answer.messages) ? answer.messages : []
    yield messages.map((value) => {
      const id = messageIdOf(value)
      const row = decoded(id, `${url}#${id}`, () =>
        sendbirdMessage(isObject(value) && value.channel_url === undefined ? { ...value, channel_url: url } : value, directOf),
      )
      return { pos: { ...ch.pos, m: id }, row, ...(row.ok ? { changedAt: row.record.sentAt } : {}) }
    })
    const last = messages.at(-1)
    if (messages.length < MESSAGE_LIMIT || last === undefined || messageIdOf(last) === '?') {
      return
    }
    ref = { message_id: messageIdOf(last), include: false }
  }
}

export { LIST_LIMIT }
