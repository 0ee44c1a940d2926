/**
 * What a page of Mattermost rows needs from other tables, read once per page in the same
 * snapshot instead of per row inside the page's query: the channel of each post (type, and the
 * name of a direct channel) and the latest join time of each membership.
 */
import type { SnapshotConnection } from '../../sql/snapshot-connection.ts'
import { channelKindsQuery, joinTimesQuery, joinTimesRangeQuery } from './queries.ts'

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

/** The latest join time of each membership of a page, by the page row's own `channelid` and `userid`. */
export class JoinTimes {
  readonly #byChannel = new Map<string, Map<string, unknown>>()
  readonly #key: (id: string) => string
  #size = 0

  constructor(key: (id: string) => string) {
    this.#key = key
  }

  /** How many memberships have a join time. */
  get size(): number {
    return this.#size
  }

  add(channelId: string, userId: string, time: unknown): void {
    const c = this.#key(channelId)
    let users = this.#byChannel.get(c)
    if (users === undefined) {
      users = new Map()
      this.#byChannel.set(c, users)
    }
    const u = this.#key(userId)
    if (!users.has(u)) {
      this.#size++
    }
    users.set(u, time)
  }

  /** The membership's latest `jointime`; undefined when the history holds none. */
  get(channelId: unknown, userId: unknown): unknown {
    return this.#byChannel.get(this.#key(String(channelId)))?.get(this.#key(String(userId)))
  }
}

/** Pairs looked up per statement outside Postgres (two parameters each). */
const PAIR_CHUNK = 1000

/**
 * The latest `jointime` the membership history holds for each member of the page. On Postgres one
 * index range from the page's first (channel, user) to its last (the page comes in that order):
 * four parameters, and the history rows of the range in index order; elsewhere the page's pairs,
 * one index lookup each.
 */
export async function joinTimesOf(conn: SnapshotConnection, rows: readonly Row[]): Promise<JoinTimes> {
  const times = new JoinTimes(matchKeyOf(conn))
  const pairs = rows.filter((r) => typeof r.channelid === 'string' && typeof r.userid === 'string')
  const first = pairs[0]
  const last = pairs[pairs.length - 1]
  if (first === undefined || last === undefined) {
    return times
  }
  const add = (found: readonly Row[]) => {
    for (const h of found) {
      times.add(String(h.channelid), String(h.userid), h.jointime)
    }
  }
  if (conn.dialect.engine === 'postgres') {
    const range = [first.channelid, first.userid, last.channelid, last.userid]
    add((await conn.query(joinTimesRangeQuery(conn.dialect), range, 'reading join times')).rows)
    return times
  }
  for (let i = 0; i < pairs.length; i += PAIR_CHUNK) {
    const chunk = pairs.slice(i, i + PAIR_CHUNK)
    const params = chunk.flatMap((r) => [r.channelid, r.userid])
    add((await conn.query(joinTimesQuery(conn.dialect, chunk.length), params, 'reading join times')).rows)
  }
  return times
}
