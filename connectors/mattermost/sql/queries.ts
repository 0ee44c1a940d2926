/**
 * The SQL the Mattermost connector sends, written once with `{lowercase}` placeholders for
 * Mattermost's identifiers (translated per engine by {@link mmSql}) and plain lowercase aliases,
 * so rows look the same on Postgres and MySQL/MariaDB.
 */
import type { LegacyEntity } from '../../../src/model/records.ts'
import type { Dialect, KeyColumn } from '../../sql/dialect.ts'
import { mmIdentifier } from './schema-names.ts'

/** Replaces each `{name}` with the engine's quoted Mattermost identifier. */
export function mmSql(dialect: Dialect, sql: string): string {
  return sql.replace(/\{([a-z]+)\}/g, (_, name: string) => mmIdentifier(dialect.engine, name, dialect.quote))
}

/** One entity's query parts: select list, FROM clause, fixed conditions, keys, delta column. */
export interface MmEntityQuery {
  readonly select: string
  readonly from: string
  readonly where: readonly string[]
  readonly keys: readonly KeyColumn[]
  /** The column delta mode compares with `since` (epoch ms). */
  readonly changedAt: string
}

/** True for a post that is not an edit-history copy. */
const LIVE_POST = `(p.{originalid} = '' OR p.{originalid} IS NULL)`

export function usersQuery(d: Dialect): MmEntityQuery {
  return {
    select: mmSql(
      d,
      `u.{id} AS id, u.{username} AS username, u.{email} AS email, u.{firstname} AS firstname,
       u.{lastname} AS lastname, u.{nickname} AS nickname, u.{position} AS user_position, u.{roles} AS roles,
       u.{authservice} AS authservice, u.{locale} AS locale, u.{props} AS props, u.{createat} AS createat,
       u.{updateat} AS updateat, u.{deleteat} AS deleteat,
       CASE WHEN b.{userid} IS NULL THEN 0 ELSE 1 END AS is_bot, b.{description} AS bot_description,
       b.{ownerid} AS bot_owner`,
    ),
    from: mmSql(d, `{users} u LEFT JOIN {bots} b ON b.{userid} = u.{id}`),
    where: [],
    keys: [{ name: 'id', expr: mmSql(d, 'u.{id}'), text: true }],
    changedAt: mmSql(d, 'u.{updateat}'),
  }
}

export function groupsQuery(d: Dialect): MmEntityQuery {
  return {
    select: mmSql(
      d,
      `c.{id} AS id, c.{type} AS channel_type, c.{name} AS channel_name, c.{displayname} AS displayname,
       c.{header} AS header, c.{purpose} AS purpose, c.{creatorid} AS creatorid, c.{createat} AS createat,
       c.{updateat} AS updateat, c.{deleteat} AS deleteat, c.{teamid} AS teamid, t.{name} AS team_name,
       t.{displayname} AS team_displayname, t.{deleteat} AS team_deleteat,
       CASE WHEN tw.dn IS NULL THEN 0 ELSE 1 END AS name_in_other_teams`,
    ),
    // Each team has its own "Town Square" (and often "Off-Topic"): a display name that open or
    // private channels of more than one team share is marked, so the group name can say its team.
    from: mmSql(
      d,
      `{channels} c LEFT JOIN {teams} t ON t.{id} = c.{teamid}
       LEFT JOIN (SELECT cc.{displayname} AS dn FROM {channels} cc WHERE cc.{type} IN ('O', 'P')
                  GROUP BY cc.{displayname} HAVING count(DISTINCT cc.{teamid}) > 1) tw
         ON tw.dn = c.{displayname} AND c.{type} IN ('O', 'P')`,
    ),
    // Direct channels are not groups: their posts become one-to-one messages.
    where: [mmSql(d, `c.{type} <> 'D'`)],
    keys: [{ name: 'id', expr: mmSql(d, 'c.{id}'), text: true }],
    changedAt: mmSql(d, 'c.{updateat}'),
  }
}

/**
 * Members of channels that are not direct. Their join times come per page from the membership
 * history ({@link joinTimesRangeQuery}, {@link joinTimesQuery}), not from a subquery per row: on Postgres that subquery cost
 * 2.7 ms of a 1,000-row page's 4.1 ms (measured on the 1M-post benchmark database).
 */
export function membersQuery(d: Dialect): MmEntityQuery {
  return {
    select: mmSql(
      d,
      `m.{channelid} AS channelid, m.{userid} AS userid, m.{roles} AS roles, m.{schemeadmin} AS schemeadmin,
       m.{schemeguest} AS schemeguest, m.{lastupdateat} AS lastupdateat`,
    ),
    from: mmSql(d, `{channelmembers} m JOIN {channels} c ON c.{id} = m.{channelid}`),
    where: [mmSql(d, `c.{type} <> 'D'`)],
    keys: [
      { name: 'channelid', expr: mmSql(d, 'm.{channelid}'), text: true },
      { name: 'userid', expr: mmSql(d, 'm.{userid}'), text: true },
    ],
    changedAt: mmSql(d, 'm.{lastupdateat}'),
  }
}

export function messagesQuery(d: Dialect): MmEntityQuery {
  // Reactions and files come along as one JSON array each per post ([emoji, user, at] and
  // [id, name, path, extension, size, mime]), in the page's own query. The values most posts have
  // (editat/deleteat 0, props {}, fileids []) come as NULL, which decodes the same and costs the
  // driver nothing to parse (reading 1M posts without mapping: 13% less CPU). The channel's type
  // and a direct channel's name come from a lookup kept across pages ({@link channelKindsQuery}):
  // joining Channels on every page cost 3.3 ms of a 1,000-row page's 7.2 ms on Postgres, since a
  // page's posts name channels in no useful order. Text columns are not NULLIF'd against '':
  // under MySQL's PAD SPACE collations that would also turn whitespace-only values into NULL.
  // Reactions.DeleteAt and FileInfo.DeleteAt are nullable (added by ALTER TABLE in Mattermost's
  // migrations 000016/000047; rows older than the column hold NULL): NULL means "not deleted".
  const agg = d.engine === 'postgres' ? 'json_agg(json_build_array' : 'JSON_ARRAYAGG(JSON_ARRAY'
  return {
    select: mmSql(
      d,
      `p.{id} AS id, p.{createat} AS createat, p.{updateat} AS updateat, NULLIF(p.{editat}, 0) AS editat,
       NULLIF(p.{deleteat}, 0) AS deleteat, p.{userid} AS userid, p.{channelid} AS channelid, p.{rootid} AS rootid,
       p.{message} AS message, p.{type} AS post_type, NULLIF(p.{props}, '{}') AS props,
       NULLIF(p.{fileids}, '[]') AS fileids, p.{hashtags} AS hashtags, p.{ispinned} AS ispinned,
       (SELECT ${agg}(r.{emojiname}, r.{userid}, r.{createat})) FROM {reactions} r
         WHERE r.{postid} = p.{id} AND (r.{deleteat} = 0 OR r.{deleteat} IS NULL)) AS reactions,
       (SELECT ${agg}(f.{id}, f.{name}, f.{path}, f.{extension}, f.{size}, f.{mimetype})) FROM {fileinfo} f
         WHERE f.{postid} = p.{id} AND (f.{deleteat} = 0 OR f.{deleteat} IS NULL)) AS files`,
    ),
    from: mmSql(d, '{posts} p'),
    // Edit-history copies (originalid set) are not live posts: counting them would double messages.
    where: [mmSql(d, LIVE_POST)],
    keys: [
      { name: 'createat', expr: mmSql(d, 'p.{createat}') },
      { name: 'id', expr: mmSql(d, 'p.{id}'), text: true },
    ],
    changedAt: mmSql(d, 'p.{updateat}'),
  }
}

/**
 * The keys-only read of an entity (`readKeys`): the same rows as its query, without the joins and
 * columns a record needs; paged by the table's primary key (posts by id alone: unique, and the
 * primary key's order).
 */
export function keysQuery(d: Dialect, entity: LegacyEntity): Pick<MmEntityQuery, 'from' | 'where' | 'keys'> {
  switch (entity) {
    case 'users':
      return { from: mmSql(d, '{users} u'), where: [], keys: usersQuery(d).keys }
    case 'groups':
      return { from: mmSql(d, '{channels} c'), where: groupsQuery(d).where, keys: groupsQuery(d).keys }
    case 'members':
      return { from: membersQuery(d).from, where: membersQuery(d).where, keys: membersQuery(d).keys }
    case 'messages':
      return { from: mmSql(d, '{posts} p'), where: [mmSql(d, LIVE_POST)], keys: [{ name: 'id', expr: mmSql(d, 'p.{id}'), text: true }] }
  }
}

/**
 * Per channel (not direct), the earliest time of each kind: `min(jointime)` of its membership
 * history and `min(createat)` of its posts — lower bounds of every member's join and every
 * message, for channels without a creation time.
 */
export function groupActivityQueries(d: Dialect): { readonly joins: string; readonly posts: string } {
  return {
    joins: mmSql(
      d,
      `SELECT h.{channelid} AS gid, min(h.{jointime}) AS t FROM {channelmemberhistory} h JOIN {channels} c ON c.{id} = h.{channelid}
       WHERE c.{type} <> 'D' AND h.{jointime} > 0 GROUP BY h.{channelid}`,
    ),
    posts: mmSql(
      d,
      `SELECT p.{channelid} AS gid, min(p.{createat}) AS t FROM {posts} p JOIN {channels} c ON c.{id} = p.{channelid}
       WHERE c.{type} <> 'D' AND p.{createat} > 0 GROUP BY p.{channelid}`,
    ),
  }
}

/** Usernames → ids, for resolving `@username` mentions in the same snapshot. */
export function usernamesQuery(d: Dialect, count: number): string {
  const marks = Array.from({ length: count }, (_, i) => d.placeholder(i + 1)).join(', ')
  return mmSql(d, `SELECT u.{id} AS id, u.{username} AS username FROM {users} u WHERE u.{username} IN (${marks})`)
}

/** The type of each of `count` channels by id, and the name of a direct one (`idA__idB`). */
export function channelKindsQuery(d: Dialect, count: number): string {
  const marks = Array.from({ length: count }, (_, i) => d.placeholder(i + 1)).join(', ')
  return mmSql(
    d,
    `SELECT c.{id} AS id, c.{type} AS channel_type, CASE WHEN c.{type} = 'D' THEN c.{name} END AS channel_name
     FROM {channels} c WHERE c.{id} IN (${marks})`,
  )
}

/**
 * The latest join time of each (channel, user) pair of the membership history from the pair `$1,
 * $2` to the pair `$3, $4`, both included (Postgres: one range of the history's primary key).
 */
export function joinTimesRangeQuery(d: Dialect): string {
  return mmSql(
    d,
    `SELECT h.{channelid} AS channelid, h.{userid} AS userid, max(h.{jointime}) AS jointime FROM {channelmemberhistory} h
     WHERE (h.{channelid}, h.{userid}) >= ($1, $2) AND (h.{channelid}, h.{userid}) <= ($3, $4) GROUP BY 1, 2`,
  )
}

/**
 * The latest join time of each of `count` (channel, user) pairs that the membership history
 * holds; the parameters are the pairs in turn (`channel, user, channel, user, …`). For
 * MySQL/MariaDB, whose range optimiser turns the pairs into one index lookup each.
 */
export function joinTimesQuery(d: Dialect, count: number): string {
  const pairs = Array.from({ length: count }, () => `(h.{channelid} = ? AND h.{userid} = ?)`).join(' OR ')
  return mmSql(
    d,
    `SELECT h.{channelid} AS channelid, h.{userid} AS userid, max(h.{jointime}) AS jointime FROM {channelmemberhistory} h
     WHERE ${pairs} GROUP BY h.{channelid}, h.{userid}`,
  )
}
