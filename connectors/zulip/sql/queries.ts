/**
 * The SQL the Zulip connector sends (Postgres only; Zulip's tables are `zerver_<model>`). Each
 * entity is one derived table `<alias>` whose columns are what its decoder reads, plus `changed_at`
 * (the delta clock) and its key columns; the paging, delta and count conditions are added outside
 * it (Postgres pushes them into the derived table and its UNION ALL branches). The realm ids are
 * integers chatferry read itself, so they are written into the SQL rather than passed as parameters.
 */
import type { LegacyEntity } from '../../../src/model/records.ts'
import type { KeyColumn } from '../../sql/dialect.ts'
import type { ArchivedMessageMode, TopicMode } from '../config.ts'

/** The realm being read and Zulip's internal realm, whose system bots post into every realm. */
export interface RealmIds {
  readonly realm: number
  /** `zulipinternal`'s id, or -1 when the database has none. */
  readonly internal: number
}

export interface QueryOptions {
  readonly topics: TopicMode
  readonly archivedMessages: ArchivedMessageMode
}

/** One entity's query: `SELECT <select> FROM <from> WHERE …`; `changedAt` is compared with `since`. */
export interface ZulipEntityQuery {
  readonly select: string
  readonly from: string
  readonly keys: readonly KeyColumn[]
  /** The change-time expression (a timestamptz), or undefined when the entity has none. */
  readonly changedAt: string
}

/** Group kinds, the first key of groups and members: streams, direct-message groups, stream topics. */
export const GROUP_KIND = { stream: 0, dmGroup: 1, topic: 2 } as const

/** The latest audit-log event of some types about a row (RealmAuditLog event types). */
const audit = (where: string, types?: readonly number[]) =>
  `(SELECT max(a.event_time) FROM zerver_realmauditlog a WHERE ${where}${types ? ` AND a.event_type IN (${types.join(', ')})` : ''})`

/** AuditLogEventType values read: USER_DEACTIVATED, SUBSCRIPTION_CREATED/ACTIVATED, CHANNEL_DEACTIVATED. */
export const AUDIT = { userDeactivated: 103, subscriptionCreated: 301, subscriptionActivated: 302, channelDeactivated: 602 } as const

function int(n: number): string {
  if (!Number.isSafeInteger(n)) {
    throw new TypeError(`expected an integer realm id, got ${n}`)
  }
  return String(n)
}

/**
 * The direct-message groups of the realm with at least three distinct subscribers (smaller ones are
 * one-to-one conversations), with their subscriber count, names and first message.
 */
function dmGroups(r: RealmIds): string {
  return `(SELECT h.id, r.id AS recipient_id, hf.first_at, hm.names
    FROM zerver_huddle h JOIN zerver_recipient r ON r.id = h.recipient_id AND r.type = 3
    CROSS JOIN LATERAL (SELECT count(*) AS n, bool_or(u.realm_id = ${int(r.realm)}) AS in_realm,
        string_agg(u.full_name, ', ' ORDER BY u.full_name, u.id) AS names
      FROM zerver_subscription s JOIN zerver_userprofile u ON u.id = s.user_profile_id WHERE s.recipient_id = r.id) hm
    CROSS JOIN LATERAL (SELECT min(m.date_sent) AS first_at FROM zerver_message m WHERE m.recipient_id = r.id) hf
    WHERE hm.in_realm AND hm.n >= 3) d`
}

/**
 * The topics of the realm's streams: one row per (stream, lower(topic)), named as its latest message
 * names it; archived messages count when they are read. `appeared_at` is when the topic came to
 * be: its earliest message's send time, or, for a message moved into it (a move sets
 * `last_edit_time`), the move — the earliest of each message's latest change. A topic made by
 * moving old messages gets the move's time, so a delta sees it (its first message is older).
 */
function topics(r: RealmIds, o: QueryOptions): string {
  const messages =
    o.archivedMessages === 'read'
      ? `(SELECT id, recipient_id, realm_id, subject, date_sent, last_edit_time FROM zerver_message
          UNION ALL SELECT id, recipient_id, realm_id, subject, date_sent, last_edit_time FROM zerver_archivedmessage)`
      : 'zerver_message'
  return `(SELECT m.recipient_id, lower(m.subject) AS topic_key, (array_agg(m.subject ORDER BY m.id DESC))[1] AS topic,
        min(m.date_sent) AS first_at, min(greatest(m.date_sent, m.last_edit_time)) AS appeared_at
      FROM ${messages} m JOIN zerver_recipient r ON r.id = m.recipient_id AND r.type = 2
      WHERE m.realm_id = ${int(r.realm)} GROUP BY m.recipient_id, lower(m.subject)) t
    JOIN zerver_recipient tr ON tr.id = t.recipient_id JOIN zerver_stream s ON s.id = tr.type_id`
}

export function usersQuery(r: RealmIds): ZulipEntityQuery {
  return {
    select: 'x.*',
    from: `(SELECT u.id, u.full_name, u.email, u.delivery_email, u.date_joined, u.is_active, u.is_bot, u.bot_type,
        u.bot_owner_id, u.role, u.is_mirror_dummy, u.timezone, u.realm_id = ${int(r.internal)} AS cross_realm,
        ${audit(`a.modified_user_id = u.id`, [AUDIT.userDeactivated])} AS deactivated_at,
        coalesce(${audit('a.modified_user_id = u.id')}, u.date_joined) AS changed_at
      FROM zerver_userprofile u
      WHERE u.realm_id = ${int(r.realm)} OR (u.realm_id = ${int(r.internal)} AND u.is_bot)) x`,
    keys: [{ name: 'id', expr: 'x.id' }],
    changedAt: 'x.changed_at',
  }
}

const streamColumns = `s.name, s.description, s.invite_only, s.is_web_public, s.history_public_to_subscribers,
  s.deactivated, s.date_created, s.creator_id, s.message_retention_days`

export function groupsQuery(r: RealmIds, o: QueryOptions): ZulipEntityQuery {
  const streamAudit = (sid: string) => audit(`a.modified_stream_id = ${sid}`, [AUDIT.channelDeactivated])
  const streams = `SELECT ${GROUP_KIND.stream} AS kind, s.id AS gid, '' AS topic_key, ${streamColumns}, NULL AS topic,
      ${streamAudit('s.id')} AS archived_at, coalesce(${audit('a.modified_stream_id = s.id')}, s.date_created) AS changed_at,
      NULL::text AS member_names
    FROM zerver_stream s WHERE s.realm_id = ${int(r.realm)}`
  const topicRows = `SELECT ${GROUP_KIND.topic} AS kind, s.id AS gid, t.topic_key, ${streamColumns.replace('s.date_created', 't.first_at AS date_created')},
      t.topic, ${streamAudit('s.id')} AS archived_at,
      greatest(t.appeared_at, ${audit('a.modified_stream_id = s.id')}) AS changed_at, NULL::text AS member_names
    FROM ${topics(r, o)}`
  const dms = `SELECT ${GROUP_KIND.dmGroup}, d.id, '', NULL, NULL, true, false, false, false, d.first_at, NULL, NULL, NULL,
      NULL, d.first_at, d.names
    FROM ${dmGroups(r)}`
  return {
    select: 'g.*',
    from: `(${o.topics === 'group-per-topic' ? topicRows : streams} UNION ALL ${dms}) g`,
    keys: [
      { name: 'kind', expr: 'g.kind' },
      { name: 'gid', expr: 'g.gid' },
      { name: 'topic_key', expr: 'g.topic_key', text: true },
    ],
    changedAt: 'g.changed_at',
  }
}

export function membersQuery(r: RealmIds, o: QueryOptions): ZulipEntityQuery {
  const joined = (uid: string, sid: string) =>
    audit(`a.modified_user_id = ${uid} AND a.modified_stream_id = ${sid}`, [AUDIT.subscriptionCreated, AUDIT.subscriptionActivated])
  const streams = `SELECT ${GROUP_KIND.stream} AS kind, s.id AS gid, '' AS topic_key, sub.user_profile_id AS uid,
      s.creator_id, ${joined('sub.user_profile_id', 's.id')} AS joined_at,
      coalesce(${audit('a.modified_user_id = sub.user_profile_id AND a.modified_stream_id = s.id')}, s.date_created) AS changed_at
    FROM zerver_subscription sub JOIN zerver_recipient sr ON sr.id = sub.recipient_id AND sr.type = 2
      JOIN zerver_stream s ON s.id = sr.type_id
    WHERE s.realm_id = ${int(r.realm)} AND sub.active`
  const topicMembers = `SELECT ${GROUP_KIND.topic} AS kind, s.id AS gid, t.topic_key, sub.user_profile_id AS uid, s.creator_id,
      ${joined('sub.user_profile_id', 's.id')} AS joined_at,
      greatest(t.appeared_at, ${audit('a.modified_user_id = sub.user_profile_id AND a.modified_stream_id = s.id')}) AS changed_at
    FROM ${topics(r, o)} JOIN zerver_subscription sub ON sub.recipient_id = t.recipient_id AND sub.active`
  const dms = `SELECT ${GROUP_KIND.dmGroup}, d.id, '', sub.user_profile_id, NULL::int, d.first_at, d.first_at
    FROM ${dmGroups(r)} JOIN zerver_subscription sub ON sub.recipient_id = d.recipient_id`
  return {
    select: 'mb.*',
    from: `(${o.topics === 'group-per-topic' ? topicMembers : streams} UNION ALL ${dms}) mb`,
    keys: [
      { name: 'kind', expr: 'mb.kind' },
      { name: 'gid', expr: 'mb.gid' },
      { name: 'topic_key', expr: 'mb.topic_key', text: true },
      { name: 'uid', expr: 'mb.uid' },
    ],
    changedAt: 'mb.changed_at',
  }
}

/** The tables one message branch reads: the live ones, or the archive's. */
interface MessageTables {
  readonly message: string
  readonly reaction: string
  /** The attachment M2M table and its two columns. */
  readonly attachments: { readonly table: string; readonly attachment: string; readonly message: string; readonly files: string }
}

const LIVE: MessageTables = {
  message: 'zerver_message',
  reaction: 'zerver_reaction',
  attachments: { table: 'zerver_attachment_messages', attachment: 'attachment_id', message: 'message_id', files: 'zerver_attachment' },
}
const ARCHIVE: MessageTables = {
  message: 'zerver_archivedmessage',
  reaction: 'zerver_archivedreaction',
  attachments: {
    table: 'zerver_archivedattachment_messages',
    attachment: 'archivedattachment_id',
    message: 'archivedmessage_id',
    files: 'zerver_archivedattachment',
  },
}

/**
 * A timestamptz as epoch milliseconds (the driver reads bigints as numbers: no date text to parse
 * per row), floored as the driver floors a Date: `::bigint` alone rounds, and a message's time
 * rounded up became a watermark past the microseconds it was sent at, so a delta's `>= since`
 * skipped a message sent later in that same millisecond.
 */
const epochMs = (t: string) => `floor(extract(epoch FROM ${t}) * 1000)::bigint`

/** The columns a message row is decoded from; the derived table adds `changed_at` for delta conditions. */
const MESSAGE_COLUMNS = [
  'id',
  'sender_id',
  'recipient_id',
  'recipient_type',
  'type_id',
  'subject',
  'topic_key',
  'content',
  'sent_ms',
  'edited_ms',
  'edit_history',
  'message_type',
  'deleted_ms',
  'system_bot_email',
  'dm_members',
  'reactions',
  'files',
]

/** The columns of one message branch (`m`: the message, `r`: its recipient, `su`: its sender). */
function messageColumns(t: MessageTables, r: RealmIds, deletedAt: string): string {
  const a = t.attachments
  return `m.id, m.sender_id, m.recipient_id, r.type AS recipient_type, r.type_id, m.subject, lower(m.subject) AS topic_key,
    m.content, ${epochMs('m.date_sent')} AS sent_ms, ${epochMs('m.last_edit_time')} AS edited_ms, m.edit_history,
    m.type AS message_type, ${epochMs(deletedAt)} AS deleted_ms,
    CASE WHEN su.realm_id = ${int(r.internal)} THEN su.email END AS system_bot_email,
    CASE WHEN r.type = 3 THEN (SELECT array_agg(s.user_profile_id ORDER BY s.user_profile_id) FROM zerver_subscription s
      WHERE s.recipient_id = m.recipient_id) END AS dm_members,
    (SELECT json_agg(json_build_array(x.emoji_name, x.user_profile_id, x.reaction_type, x.emoji_code) ORDER BY x.id)
      FROM ${t.reaction} x WHERE x.message_id = m.id) AS reactions,
    CASE WHEN m.has_attachment THEN (SELECT json_agg(json_build_array(f.id, f.file_name, f.path_id, f.size, f.content_type) ORDER BY f.id)
      FROM ${a.table} am JOIN ${a.files} f ON f.id = am.${a.attachment} WHERE am.${a.message} = m.id AND NOT f.deleted) END AS files,
    greatest(m.date_sent, m.last_edit_time, ${deletedAt}) AS changed_at`
}

export function messagesQuery(r: RealmIds, o: QueryOptions): ZulipEntityQuery {
  const joins = 'LEFT JOIN zerver_recipient r ON r.id = m.recipient_id LEFT JOIN zerver_userprofile su ON su.id = m.sender_id'
  const live = `SELECT ${messageColumns(LIVE, r, 'NULL::timestamptz')} FROM zerver_message m ${joins} WHERE m.realm_id = ${int(r.realm)}`
  // An archived message that was restored is back in zerver_message (same id): read once, live.
  const archived = `SELECT ${messageColumns(ARCHIVE, r, 'tx.timestamp')}
    FROM zerver_archivedmessage m JOIN zerver_archivetransaction tx ON tx.id = m.archive_transaction_id ${joins}
    WHERE m.realm_id = ${int(r.realm)} AND NOT tx.restored AND NOT EXISTS (SELECT 1 FROM zerver_message l WHERE l.id = m.id)`
  return {
    select: MESSAGE_COLUMNS.map((c) => `msg.${c}`).join(', '),
    from: `(${o.archivedMessages === 'read' ? `${live} UNION ALL ${archived}` : live}) msg`,
    keys: [{ name: 'id', expr: 'msg.id' }],
    changedAt: 'msg.changed_at',
  }
}

export function entityQuery(entity: LegacyEntity, r: RealmIds, o: QueryOptions): ZulipEntityQuery {
  switch (entity) {
    case 'users':
      return usersQuery(r)
    case 'groups':
      return groupsQuery(r, o)
    case 'members':
      return membersQuery(r, o)
    case 'messages':
      return messagesQuery(r, o)
  }
}

/** Full names → user ids of the realm (and the system bots), for `@**Name**` mentions without an id. */
export function namesQuery(r: RealmIds, count: number): string {
  const marks = Array.from({ length: count }, (_, i) => `$${i + 1}`).join(', ')
  return `SELECT u.id, lower(u.full_name) AS name FROM zerver_userprofile u
    WHERE (u.realm_id = ${int(r.realm)} OR (u.realm_id = ${int(r.internal)} AND u.is_bot)) AND lower(u.full_name) IN (${marks})`
}

/** The realm ids of `string_id` and of `zulipinternal`. */
export const REALM_QUERY = `SELECT (SELECT id FROM zerver_realm WHERE string_id = $1) AS realm,
  coalesce((SELECT id FROM zerver_realm WHERE string_id = 'zulipinternal'), -1) AS internal,
  (SELECT string_agg(quote_literal(string_id), ', ' ORDER BY string_id) FROM zerver_realm WHERE string_id <> 'zulipinternal') AS known`
