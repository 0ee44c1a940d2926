/**
 * The channels of a Stream Chat app over the API, listed once when a session opens (Query
 * Channels, 30 a page, oldest first by `created_at`, paged by `created_at $gte` the last one seen,
 * with an offset only across channels created in the same instant), each with up to 100 members
 * (enough to tell a one-to-one distinct channel). Memory: one entry per channel, never messages.
 */
import type { JsonObject } from '../../../src/model/records.ts'
import { channelCid, DISTINCT_PREFIX } from '../entities/channels.ts'
import { FieldProblem, isObject } from '../entities/fields.ts'
import { memberUserId } from '../entities/members.ts'
import type { ChannelTarget } from '../entities/messages.ts'
import type { StreamClient } from './client.ts'

export interface ApiChannel {
  readonly cid?: string
  readonly value: JsonObject
  /** The members Query Channels returned (at most 100). */
  readonly members: readonly JsonObject[]
  readonly target?: ChannelTarget
  readonly problem?: { readonly field: string; readonly reason: string }
}

const PAGE = 30

interface QueryChannelsResponse {
  readonly channels?: readonly { readonly channel?: unknown; readonly members?: unknown }[]
}

function entry(item: { readonly channel?: unknown; readonly members?: unknown }): ApiChannel {
  const value = isObject(item.channel) ? item.channel : {}
  const members = Array.isArray(item.members) ? item.members.filter(isObject) : []
  try {
    const cid = channelCid(value)
    const ids = members.flatMap((m) => {
      try {
        return [memberUserId(m)]
      } catch {
        return []
      }
    })
    const distinct = cid.slice(cid.indexOf(':') + 1).startsWith(DISTINCT_PREFIX)
    // Query Channels returns at most `member_limit` members: `member_count` says whether they are all.
    const count = typeof value.member_count === 'number' ? value.member_count : ids.length
    const pair = distinct && count === 2 && ids.length === 2 && ids[0] !== ids[1] ? ([ids[0], ids[1]] as [string, string]) : undefined
    return { cid, value, members, target: pair !== undefined ? { cid, pair } : { cid } }
  } catch (err) {
    if (!(err instanceof FieldProblem)) {
      throw err
    }
    return { value, members, problem: { field: err.field, reason: err.message } }
  }
}

/** Every channel of the app, oldest first. */
export async function listChannels(client: StreamClient, signal?: AbortSignal): Promise<ApiChannel[]> {
  const out: ApiChannel[] = []
  const seen = new Set<string>()
  let at: string | undefined
  let offset = 0
  for (;;) {
    const res = await client.call<QueryChannelsResponse>('queryChannels', 'POST', '/channels', {
      body: {
        filter_conditions: at !== undefined ? { created_at: { $gte: at } } : {},
        sort: [{ field: 'created_at', direction: 1 }],
        limit: PAGE,
        offset,
        state: true,
        watch: false,
        presence: false,
        member_limit: 100,
        message_limit: 0,
      },
      ...(signal ? { signal } : {}),
    })
    const page = res.channels ?? []
    for (const item of page) {
      const e = entry(item)
      const key = e.cid ?? `#${out.length}`
      if (!seen.has(key)) {
        seen.add(key)
        out.push(e)
      }
    }
    if (page.length < PAGE) {
      return out
    }
    const last = page.at(-1)?.channel
    const lastAt = isObject(last) && typeof last.created_at === 'string' ? last.created_at : undefined
    if (lastAt === undefined || lastAt === at) {
      offset += PAGE // a page of channels created in one instant: step over it
    } else {
      at = lastAt
      offset = 0
    }
  }
}
