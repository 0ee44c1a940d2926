/**
 * Zulip streams, stream topics and direct-message groups → `LegacyGroup`:
 * - a stream (`kind` 0, id = the stream id): `invite_only` → private, else public; `deactivated` →
 *   `archivedAt` (the latest CHANNEL_DEACTIVATED audit event, else the creation time); the
 *   `!DEACTIVATED:` prefix older Zulip versions gave archived streams' names is removed;
 * - a topic (`kind` 2, `group-per-topic` only, id `<streamId>/<lowercase topic>`): named
 *   `<stream> > <topic>`, typed and archived like its stream, created with its first message;
 * - a direct-message group of three or more (`kind` 1, id `dm-<huddleId>`): private, named by its
 *   members' full names (as Mattermost group DMs are), created with its first message.
 */
import type { JsonObject, LegacyGroup } from '../../../src/model/records.ts'
import { compact, decodeBoolean, decodeId, decodeOptionalId, decodeOptionalText, decodeTimestamp, FieldProblem } from '../../sql/decode.ts'
import { GROUP_KIND } from '../sql/queries.ts'

/**
 * The prefix older Zulip versions put on the name of a deactivated stream to free the name:
 * `!DEACTIVATED:` (more `!` when taken), later `<7 hex digits of sha512(id)>!DEACTIVATED:`; a
 * later migration removed it again, so both prefixed and plain names occur.
 */
export const DEACTIVATED_PREFIX = /^(?:[0-9a-f]{7})?!+DEACTIVATED:/
/** Zulip's name for the empty topic. */
export const EMPTY_TOPIC_NAME = 'general chat'

/** The legacy id of a group row: `<streamId>`, `dm-<huddleId>` or `<streamId>/<topicKey>`. */
export function groupIdOf(kind: unknown, gid: unknown, topicKey: unknown): string {
  const id = String(gid)
  switch (Number(kind)) {
    case GROUP_KIND.dmGroup:
      return `dm-${id}`
    case GROUP_KIND.topic:
      return `${id}/${String(topicKey ?? '')}`
    default:
      return id
  }
}

export function decodeGroup(row: Record<string, unknown>, lossy: boolean): LegacyGroup {
  const kind = Number(row.kind)
  const id = groupIdOf(kind, decodeId('id', row.gid, lossy), row.topic_key)
  const createdAt = decodeTimestamp('date_created', row.date_created)
  if (kind === GROUP_KIND.dmGroup) {
    const names = decodeOptionalText('full_name', row.member_names, lossy)
    if (names === undefined) {
      throw new FieldProblem('full_name', 'the direct-message group has no named member')
    }
    return compact<LegacyGroup>({
      id,
      name: names,
      type: 'private',
      metadata: { zulipType: 'direct-message-group' },
      createdAt,
      updatedAt: createdAt,
    })
  }
  let stream = decodeOptionalText('name', row.name, lossy)?.trim() ?? ''
  const deactivated = decodeBoolean('deactivated', row.deactivated)
  if (deactivated) {
    stream = stream.replace(DEACTIVATED_PREFIX, '').trim()
  }
  if (stream === '') {
    throw new FieldProblem('name', 'is empty')
  }
  const topic = kind === GROUP_KIND.topic ? (decodeOptionalText('subject', row.topic, lossy) ?? '') : undefined
  const metadata = compact<JsonObject>({
    zulipType: topic === undefined ? 'stream' : 'topic',
    stream: topic === undefined ? undefined : stream,
    topic,
    webPublic: decodeBoolean('is_web_public', row.is_web_public) || undefined,
    historyPublicToSubscribers: decodeBoolean('history_public_to_subscribers', row.history_public_to_subscribers, true) ? undefined : false,
    messageRetentionDays:
      row.message_retention_days === null || row.message_retention_days === undefined ? undefined : Number(row.message_retention_days),
  })
  return compact<LegacyGroup>({
    id,
    name: topic === undefined ? stream : `${stream} > ${topic || EMPTY_TOPIC_NAME}`,
    type: decodeBoolean('invite_only', row.invite_only) ? 'private' : 'public',
    ownerId: decodeOptionalId('creator_id', row.creator_id),
    description: decodeOptionalText('description', row.description, lossy),
    metadata,
    createdAt,
    archivedAt: deactivated ? (decodeTimestamp('realmauditlog.event_time', row.archived_at) ?? createdAt) : undefined,
    updatedAt: decodeTimestamp('changed_at', row.changed_at),
  })
}
