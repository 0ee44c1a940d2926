/**
 * The SQL the Nextcloud Talk connector sends: one query per entity over the install's prefixed
 * tables (`sql/tables.ts`), with plain lowercase aliases so rows look the same on MariaDB/MySQL and
 * Postgres. Rooms are split by type: one-to-one rooms are no groups (their messages are one-to-one),
 * group and public rooms are groups, and the changelog and note-to-self rooms follow `rooms:`.
 */
import type { LegacyEntity } from '../../../src/model/records.ts'
import type { KeyColumn, Params } from '../../sql/dialect.ts'
import type { NextcloudTalkConfig } from '../config.ts'
import type { NcSchema } from './tables.ts'

/** Talk's conversation types (nextcloud-talk.readthedocs.io "Constants"). */
export const ROOM_TYPE = { oneToOne: 1, group: 2, public: 3, changelog: 4, oneToOneFormer: 5, noteToSelf: 6 } as const

/** Every type Talk defines; a room of any other type (a newer Talk's) is read as a group and refused. */
const KNOWN_ROOM_TYPES: readonly number[] = Object.values(ROOM_TYPE)

/**
 * `r.type` in `types`, or a type this connector does not know: such a room, its members and its
 * messages are read (and refused: see decodeGroup, receiverOf) rather than left out without a word.
 */
function typeIn(s: NcSchema, types: readonly number[]): string {
  const type = s.col('r', 'type')
  return `(${type} IN (${types.join(', ')}) OR ${type} NOT IN (${KNOWN_ROOM_TYPES.join(', ')}))`
}

/** The comment verbs that are reactions: folded into the message they react to, never messages. */
export const REACTION_VERBS = ['reaction', 'reaction_deleted'] as const

/** One entity's query parts: select list, FROM clause, fixed conditions, keys, delta condition. */
export interface NcEntityQuery {
  readonly select: string
  readonly from: string
  readonly where: readonly string[]
  readonly keys: readonly KeyColumn[]
  /** The delta condition for `since` (epoch ms), or undefined when the entity has no change time. */
  readonly changedSince?: (params: Params, since: number) => string
}

/** The room types read as groups, and those whose messages are read, under these settings. */
export function roomTypes(rooms: NextcloudTalkConfig['rooms']): { groups: number[]; messages: number[] } {
  const groups: number[] = [ROOM_TYPE.group, ROOM_TYPE.public]
  if (rooms.changelog === 'group') {
    groups.push(ROOM_TYPE.changelog)
  }
  const messages = [ROOM_TYPE.oneToOne, ROOM_TYPE.oneToOneFormer, ...groups]
  if (rooms.noteToSelf === 'self') {
    messages.push(ROOM_TYPE.noteToSelf)
  }
  return { groups, messages: messages.sort((a, b) => a - b) }
}

/** A `datetime`/`timestamp` bound for `since`, floored to the second (MariaDB `datetime` holds whole seconds). */
export function datetimeBound(since: number): string {
  return new Date(Math.floor(since / 1000) * 1000)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, '')
}

export function usersQuery(s: NcSchema): NcEntityQuery {
  const t = s.table.bind(s)
  const pref = (app: string, key: string) =>
    `(SELECT p.${s.dialect.quote('configvalue')} FROM ${t('preferences')} p WHERE p.${s.dialect.quote('userid')} = u.${s.dialect.quote('uid')}
       AND p.${s.dialect.quote('appid')} = '${app}' AND p.${s.dialect.quote('configkey')} = '${key}')`
  return {
    select: `${s.col('u', 'uid')} AS uid, ${s.col('u', 'displayname')} AS displayname, ${s.col('a', 'data')} AS account,
       ${pref('core', 'enabled')} AS enabled, ${pref('login', 'lastLogin')} AS last_login, ${pref('settings', 'email')} AS pref_email`,
    from: `${t('users')} u LEFT JOIN ${t('accounts')} a ON ${s.col('a', 'uid')} = ${s.col('u', 'uid')}`,
    where: [],
    keys: [{ name: 'uid', expr: s.col('u', 'uid'), text: true }],
  }
}

export function groupsQuery(s: NcSchema, types: readonly number[]): NcEntityQuery {
  const t = s.table.bind(s)
  const lastActivity = s.column('talk_rooms', 'r', 'last_activity')
  return {
    select: `${s.col('r', 'id')} AS id, ${s.col('r', 'token')} AS token, ${s.col('r', 'name')} AS room_name, ${s.col('r', 'type')} AS room_type,
       ${s.column('talk_rooms', 'r', 'description')} AS description, ${s.column('talk_rooms', 'r', 'read_only')} AS read_only,
       ${s.column('talk_rooms', 'r', 'listable')} AS listable, ${s.column('talk_rooms', 'r', 'object_type')} AS object_type,
       ${s.column('talk_rooms', 'r', 'object_id')} AS object_id, ${s.column('talk_rooms', 'r', 'remote_server')} AS remote_server,
       ${s.column('talk_rooms', 'r', 'avatar')} AS avatar, ${lastActivity} AS last_activity,
       (SELECT min(${s.col('o', 'actor_id')}) FROM ${t('talk_attendees')} o WHERE ${s.col('o', 'room_id')} = ${s.col('r', 'id')}
         AND ${s.col('o', 'actor_type')} = 'users' AND ${s.col('o', 'participant_type')} = 1) AS owner_id`,
    from: `${t('talk_rooms')} r`,
    where: [typeIn(s, types)],
    keys: [{ name: 'id', expr: s.col('r', 'id') }],
    ...(lastActivity === 'NULL' ? {} : { changedSince: (p: Params, since: number) => `${lastActivity} >= ${p.add(datetimeBound(since))}` }),
  }
}

export function membersQuery(s: NcSchema, types: readonly number[]): NcEntityQuery {
  const t = s.table.bind(s)
  return {
    select: `${s.col('a', 'room_id')} AS room_id, ${s.col('a', 'actor_id')} AS actor_id, ${s.col('a', 'participant_type')} AS participant_type`,
    from: `${t('talk_attendees')} a JOIN ${t('talk_rooms')} r ON ${s.col('r', 'id')} = ${s.col('a', 'room_id')}`,
    // Guests, e-mail guests, federated users, groups and teams (circles) are no user members; a
    // group's members are attendees of their own (Talk adds each one as a `users` row).
    where: [`${s.col('a', 'actor_type')} = 'users'`, typeIn(s, types)],
    keys: [
      { name: 'room_id', expr: s.col('a', 'room_id') },
      { name: 'actor_id', expr: s.col('a', 'actor_id'), text: true },
    ],
  }
}

/**
 * The room id of a chat comment (`object_id` is text), as the engine compares it with
 * `talk_rooms.id`; NULL (no room: the comment is refused on `object_id`) unless it is all digits.
 * MariaDB's `CAST('12abc' AS UNSIGNED)` is 12, which would put a malformed comment in room 12.
 */
function roomIdOf(s: NcSchema, alias: string): string {
  const objectId = s.col(alias, 'object_id')
  return s.dialect.engine === 'postgres'
    ? `(CASE WHEN ${objectId} ~ '^[0-9]{1,18}$' THEN CAST(${objectId} AS bigint) END)`
    : `(CASE WHEN ${objectId} REGEXP '^[0-9]{1,18}$' THEN CAST(${objectId} AS UNSIGNED) END)`
}

/** A `datetime`/`timestamp` column as Unix seconds (both engines read it as UTC: the session's time zone is UTC). */
export function epochSeconds(s: NcSchema, expr: string): string {
  return s.dialect.engine === 'postgres' ? `CAST(extract(epoch FROM ${expr}) AS bigint)` : `UNIX_TIMESTAMP(${expr})`
}

export function messagesQuery(s: NcSchema, types: readonly number[]): NcEntityQuery {
  const t = s.table.bind(s)
  const c = (name: string) => s.col('c', name)
  // The values most comments have (no parent, verb `comment`, and the room name of a room that is
  // no one-to-one room, which is not used) come as NULL, which costs the driver nothing to parse.
  // A former one-to-one room (type 5: Talk renamed it to the deleted user's display name) also
  // brings the user who stayed (its one `users` attendee).
  // Reactions are read per page (reactionsQuery), not per row.
  return {
    select: `${c('id')} AS id, NULLIF(${c('parent_id')}, 0) AS parent_id, ${c('actor_type')} AS actor_type, ${c('actor_id')} AS actor_id,
       ${c('message')} AS message, NULLIF(${c('verb')}, 'comment') AS verb, ${epochSeconds(s, c('creation_timestamp'))} AS created,
       ${c('object_id')} AS object_id, ${s.column('comments', 'c', 'meta_data')} AS meta_data, ${s.column('comments', 'c', 'reference_id')} AS reference_id,
       ${s.col('r', 'type')} AS room_type,
       CASE WHEN ${s.col('r', 'type')} IN (${ROOM_TYPE.oneToOne}, ${ROOM_TYPE.oneToOneFormer}) THEN ${s.col('r', 'name')} END AS room_name,
       CASE WHEN ${s.col('r', 'type')} = ${ROOM_TYPE.oneToOneFormer} THEN (SELECT min(${s.col('fa', 'actor_id')}) FROM ${t('talk_attendees')} fa
         WHERE ${s.col('fa', 'room_id')} = ${s.col('r', 'id')} AND ${s.col('fa', 'actor_type')} = 'users') END AS former_peer`,
    from: `${t('comments')} c LEFT JOIN ${t('talk_rooms')} r ON ${s.col('r', 'id')} = ${roomIdOf(s, 'c')}`,
    where: [
      `${c('object_type')} = 'chat'`,
      `(${c('verb')} IS NULL OR ${c('verb')} NOT IN (${REACTION_VERBS.map((v) => `'${v}'`).join(', ')}))`,
      // A comment of a room that no longer exists or of an unknown type is read (and refused:
      // object_id, talk_rooms.type); one of a skipped room type (changelog, note-to-self by default) is not.
      `(${s.col('r', 'id')} IS NULL OR ${typeIn(s, types)})`,
    ],
    keys: [{ name: 'id', expr: c('id') }],
    // New comments, and comments something happened to since: an edit, a deletion, a reaction or
    // a reply each adds a comment whose parent_id names it (Talk's message_edited/message_deleted
    // system messages, reaction comments, replies).
    changedSince: (p, since) => {
      const bound = datetimeBound(since)
      return `(${c('creation_timestamp')} >= ${p.add(bound)} OR EXISTS (SELECT 1 FROM ${t('comments')} y WHERE ${s.col('y', 'parent_id')} = ${c('id')}
        AND ${s.col('y', 'object_type')} = 'chat' AND ${s.col('y', 'creation_timestamp')} >= ${p.add(bound)}))`
    },
  }
}

/**
 * The live reactions (`reaction` comments; a withdrawn one is `reaction_deleted`) to the comments
 * of a page: by the range of their parent ids (`comments_parent_id_index`), or by the ids
 * themselves when the page's ids are sparse (a delta read).
 */
export function reactionsQuery(s: NcSchema, ids: readonly number[]): { sql: string; params: number[] } {
  const x = (name: string) => s.col('x', name)
  const first = Math.min(...ids)
  const last = Math.max(...ids)
  const dense = last - first < 4 * ids.length
  const marks = dense
    ? `BETWEEN ${s.dialect.placeholder(1)} AND ${s.dialect.placeholder(2)}`
    : `IN (${ids.map((_, i) => s.dialect.placeholder(i + 1)).join(', ')})`
  return {
    sql: `SELECT ${x('parent_id')} AS parent_id, ${x('message')} AS emoji, ${x('actor_type')} AS actor_type, ${x('actor_id')} AS actor_id,
      ${epochSeconds(s, x('creation_timestamp'))} AS at FROM ${s.table('comments')} x
      WHERE ${x('parent_id')} ${marks} AND ${x('object_type')} = 'chat' AND ${x('verb')} = 'reaction'`,
    params: dense ? [first, last] : [...ids],
  }
}

export function entityQuery(s: NcSchema, entity: LegacyEntity, rooms: NextcloudTalkConfig['rooms']): NcEntityQuery {
  const types = roomTypes(rooms)
  switch (entity) {
    case 'users':
      return usersQuery(s)
    case 'groups':
      return groupsQuery(s, types.groups)
    case 'members':
      return membersQuery(s, types.groups)
    case 'messages':
      return messagesQuery(s, types.messages)
  }
}

/** Per group room, its earliest chat comment (rooms carry no creation time). */
export function firstMessageQuery(s: NcSchema, groupTypes: readonly number[]): string {
  const t = s.table.bind(s)
  return `SELECT ${s.col('r', 'id')} AS gid, min(${s.col('c', 'creation_timestamp')}) AS t FROM ${t('comments')} c
    JOIN ${t('talk_rooms')} r ON ${s.col('r', 'id')} = ${roomIdOf(s, 'c')}
    WHERE ${s.col('c', 'object_type')} = 'chat' AND ${s.col('r', 'type')} IN (${groupTypes.join(', ')}) GROUP BY ${s.col('r', 'id')}`
}

/** Share id → (file id, file name) for `file_shared` messages (`oc_share`, share type 10 = room). */
export function sharesQuery(s: NcSchema, count: number): string {
  const marks = Array.from({ length: count }, (_, i) => s.dialect.placeholder(i + 1)).join(', ')
  return `SELECT ${s.col('h', 'id')} AS id, ${s.col('h', 'item_source')} AS file_id, ${s.col('h', 'file_target')} AS file_target
    FROM ${s.table('share')} h WHERE ${s.col('h', 'id')} IN (${marks})`
}

/**
 * File id → (path in its storage, storage id) for the shared files' bytes (`source.files`):
 * `oc_filecache.path` (`files/Talk/photo.jpg` in a home storage) and `oc_storages.id`
 * (`home::alice`, `object::user:alice`, `local::/srv/data/`…).
 */
export function fileLocationsQuery(s: NcSchema, count: number): string {
  const marks = Array.from({ length: count }, (_, i) => s.dialect.placeholder(i + 1)).join(', ')
  return `SELECT ${s.col('f', 'fileid')} AS file_id, ${s.col('f', 'path')} AS path, ${s.col('st', 'id')} AS storage
    FROM ${s.table('filecache')} f JOIN ${s.table('storages')} st ON ${s.col('st', 'numeric_id')} = ${s.col('f', 'storage')}
    WHERE ${s.col('f', 'fileid')} IN (${marks})`
}
