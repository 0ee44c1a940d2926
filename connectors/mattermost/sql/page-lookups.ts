/**
 * What a page of Mattermost rows needs from other tables, read once per page in the same
 * snapshot instead of per row inside the page's query: the channel of each post (type, and the
 * name of a direct channel) and the latest join time of each membership.
 */
import type { SnapshotConnection } from '../../sql/snapshot-connection.ts'
import { channelKindsQuery, joinTimesQuery } from './queries.ts'

type Row = Record<string, unknown>

/** A channel as a post needs it: its type, and for a direct channel (`D`) its name `idA__idB`. */
export interface ChannelKind {
  readonly type: string
  readonly name?: string
}

/** Channel ids looked up per statement. */
const CHANNEL_CHUNK = 500
/** The most channels kept between pages (about 100 bytes each); past it the lookup starts afresh. */
const CHANNELS_KEPT = 50_000

/**
 * The channels the posts of each page name, looked up for the ids not seen on earlier pages and
 * kept for later ones (posts come in time order, so a page names mostly channels seen before).
 * `null`: no such channel in the snapshot.
 */
export class ChannelKinds {
  readonly #conn: SnapshotConnection
  readonly #kept: number
  readonly #known = new Map<string, ChannelKind | null>()

  constructor(conn: SnapshotConnection, kept = CHANNELS_KEPT) {
    this.#conn = conn
    this.#kept = kept
  }

  /** The kinds of every channel the page's posts name (by the raw `channelid`, as text). */
  async forPage(rows: readonly Row[]): Promise<ReadonlyMap<string, ChannelKind | null>> {
    const missing = new Set<string>()
    for (const row of rows) {
      const id = row.channelid
      if (typeof id === 'string' && !this.#known.has(id)) {
        missing.add(id)
      }
    }
    if (missing.size === 0) {
      return this.#known
    }
    if (this.#known.size + missing.size > this.#kept) {
      // Keep the page's own channels: drop the others, then look the missing ones up.
      const keep = new Map<string, ChannelKind | null>()
      for (const row of rows) {
        const id = row.channelid
        const kind = typeof id === 'string' ? this.#known.get(id) : undefined
        if (kind !== undefined) {
          keep.set(id as string, kind)
        }
      }
      this.#known.clear()
      for (const [id, kind] of keep) {
        this.#known.set(id, kind)
      }
    }
    const ids = [...missing]
    const match = matchKeyOf(this.#conn)
    for (let i = 0; i < ids.length; i += CHANNEL_CHUNK) {
      const chunk = ids.slice(i, i + CHANNEL_CHUNK)
      const r = await this.#conn.query(channelKindsQuery(this.#conn.dialect, chunk.length), chunk, 'reading the channels of posts')
      const got = new Map<string, ChannelKind>()
      for (const c of r.rows) {
        const name = typeof c.channel_name === 'string' ? c.channel_name : undefined
        got.set(match(String(c.id)), { type: String(c.channel_type), ...(name === undefined ? {} : { name }) })
      }
      for (const id of chunk) {
        this.#known.set(id, got.get(match(id)) ?? null)
      }
    }
    return this.#known
  }
}

/**
 * How the engine compares the ids the lookups send: as they are on Postgres; on MySQL/MariaDB,
 * whose Mattermost tables use the charset's default case-insensitive, PAD SPACE collation, also
 * across letter case and trailing spaces (as the join the lookups replace matched them).
 */
function matchKeyOf(conn: SnapshotConnection): (id: string) => string {
  return conn.dialect.engine === 'mysql' ? (id) => id.toLowerCase().trimEnd() : (id) => id
}

/** The key of a (channel, user) pair in {@link joinTimesOf}'s answer. */
export const pairKey = (channelId: unknown, userId: unknown): string => `${String(channelId)}\u0000${String(userId)}`

/** Pairs looked up per statement (two parameters each outside Postgres). */
const PAIR_CHUNK = 1000

/**
 * The latest `jointime` the membership history holds for each member of the page, by
 * {@link pairKey} of the page row's own `channelid` and `userid`.
 */
export async function joinTimesOf(conn: SnapshotConnection, rows: readonly Row[]): Promise<Map<string, unknown>> {
  const match = matchKeyOf(conn)
  const got = new Map<string, unknown>()
  const pairs = rows.filter((r) => typeof r.channelid === 'string' && typeof r.userid === 'string')
  for (let i = 0; i < pairs.length; i += PAIR_CHUNK) {
    const chunk = pairs.slice(i, i + PAIR_CHUNK)
    const params =
      conn.dialect.engine === 'postgres' ? [chunk.map((r) => r.channelid), chunk.map((r) => r.userid)] : chunk.flatMap((r) => [r.channelid, r.userid])
    const r = await conn.query(joinTimesQuery(conn.dialect, chunk.length), params, 'reading join times')
    for (const h of r.rows) {
      got.set(pairKey(match(String(h.channelid)), match(String(h.userid))), h.jointime)
    }
  }
  const found = new Map<string, unknown>()
  for (const r of pairs) {
    const t = got.get(pairKey(match(r.channelid as string), match(r.userid as string)))
    if (t !== undefined) {
      found.set(pairKey(r.channelid, r.userid), t)
    }
  }
  return found
}
