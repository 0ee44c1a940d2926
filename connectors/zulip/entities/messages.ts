/**
 * Zulip messages (`zerver_message` of the realm; with `archivedMessages: read` also the unrestored
 * rows of `zerver_archivedmessage`) → `LegacyMessage`. The receiver follows the recipient type:
 * - 1 (personal): one-to-one to `type_id` (a message to oneself has receiver = sender);
 * - 2 (stream): to the stream's group, or with `group-per-topic` to `<streamId>/<lowercase topic>`;
 *   the topic (`subject`) is in `metadata.topic` either way;
 * - 3 (direct-message group): to `dm-<huddleId>` when it has three or more members; a group of
 *   two (newer Zulip may hold 1:1 conversations so) is one-to-one to the other member, of one a
 *   message to oneself.
 * Message type 2 (resolve-topic notice) and messages of the internal realm's system bots are
 * system messages. Reactions: the emoji itself for Unicode emoji, else its name.
 */
import type { JsonObject, LegacyAttachment, LegacyMessage, LegacyReaction } from '../../../src/model/records.ts'
import { fileUrl, typeOfAttachments } from '../../sql/attachments.ts'
import { compact, decodeCount, decodeId, decodeJson, decodeOptionalText, decodeText, decodeTimestamp, FieldProblem } from '../../sql/decode.ts'
import type { TopicMode } from '../config.ts'
import { summariseEditHistory } from './edit-history.ts'
import { parseMentions, resolveMentions } from './mentions.ts'

export interface MessageDecodeContext {
  readonly lossy: boolean
  readonly topics: TopicMode
  /** Without a trailing slash. */
  readonly fileBaseUrl: string
  /** The pacing host of this source's files when `source.files` is set (attachments then carry a locator). */
  readonly fileHost?: string
  /** Lowercase full name → user ids, for the names this page mentions. */
  readonly names: ReadonlyMap<string, readonly string[]>
}

/** Zulip's topic of direct messages: BEL since 2024, `""` before. */
const DM_TOPIC = '\u0007'
const RESOLVE_TOPIC_NOTIFICATION = 2

interface Receiver {
  readonly receiverType: 'user' | 'group'
  readonly receiverId: string
}

function dmMembers(value: unknown): string[] {
  if (!Array.isArray(value)) {
    return []
  }
  return [...new Set(value.map((v) => String(v)))]
}

function receiverOf(row: Record<string, unknown>, senderId: string, ctx: MessageDecodeContext): Receiver {
  const typeId = row.type_id === null || row.type_id === undefined ? undefined : String(row.type_id)
  switch (Number(row.recipient_type)) {
    case 1:
      return { receiverType: 'user', receiverId: typeId as string }
    case 2:
      return { receiverType: 'group', receiverId: ctx.topics === 'group-per-topic' ? `${typeId}/${String(row.topic_key ?? '')}` : (typeId as string) }
    case 3: {
      const members = dmMembers(row.dm_members)
      if (members.length === 0) {
        throw new FieldProblem('recipient_id', `direct-message group ${typeId} has no members`)
      }
      if (!members.includes(senderId)) {
        throw new FieldProblem('sender_id', `sender ${senderId} is not a member of direct-message group ${typeId}`)
      }
      if (members.length >= 3) {
        return { receiverType: 'group', receiverId: `dm-${typeId}` }
      }
      return { receiverType: 'user', receiverId: members.find((m) => m !== senderId) ?? senderId }
    }
    default:
      throw new FieldProblem('recipient_id', `unknown recipient ${String(row.recipient_id)}`)
  }
}

function attachmentsOf(row: Record<string, unknown>, ctx: MessageDecodeContext): LegacyAttachment[] | undefined {
  const files = decodeJson('attachments', row.files, 'array', ctx.lossy)
  if (files === undefined || files.length === 0) {
    return undefined
  }
  return files.map((f) => {
    const [id, name, path, size, mime] = f as unknown[]
    const fileId = decodeId('attachment.id', id)
    const pathId = decodeOptionalText('attachment.path_id', path)
    if (pathId === undefined) {
      throw new FieldProblem('attachment.path_id', `attachment ${fileId} has no path`)
    }
    return compact<LegacyAttachment>({
      url: fileUrl(ctx.fileBaseUrl, pathId),
      name: decodeOptionalText('attachment.file_name', name) ?? pathId.split('/').pop() ?? fileId,
      mimeType: decodeOptionalText('attachment.content_type', mime),
      size: decodeCount('attachment.size', size),
      source: ctx.fileHost === undefined ? undefined : { reader: 'zulip', ref: pathId, host: ctx.fileHost },
    })
  })
}

/** The emoji of a Unicode reaction (`emoji_code` `1f44d` or `1f1fa-1f1f8`), else its name. */
export function reactionEmoji(name: string, type: unknown, code: unknown): string {
  if (type === 'unicode_emoji' && typeof code === 'string' && /^[0-9a-f]{1,6}(-[0-9a-f]{1,6})*$/i.test(code)) {
    const points = code.split('-').map((h) => parseInt(h, 16))
    if (points.every((p) => p <= 0x10ffff && (p < 0xd800 || p > 0xdfff))) {
      return String.fromCodePoint(...points)
    }
  }
  return name
}

function reactionsOf(row: Record<string, unknown>, lossy: boolean): LegacyReaction[] | undefined {
  const list = decodeJson('reactions', row.reactions, 'array', lossy)
  if (list === undefined || list.length === 0) {
    return undefined
  }
  return list.map((r) => {
    const [name, userId, type, code] = r as unknown[]
    return { emoji: reactionEmoji(decodeId('reaction.emoji_name', name), type, code), userId: decodeId('reaction.user_profile_id', userId) }
  })
}

function systemKindOf(row: Record<string, unknown>): string | undefined {
  if (Number(row.message_type) === RESOLVE_TOPIC_NOTIFICATION) {
    return 'resolve_topic_notification'
  }
  if (typeof row.system_bot_email === 'string') {
    return `system_bot:${row.system_bot_email.split('@')[0] || 'unknown'}`
  }
  return undefined
}

function mentionsOf(text: string, ctx: MessageDecodeContext, metadata: JsonObject): Pick<LegacyMessage, 'mentions' | 'mentionHandles'> {
  if (!text.includes('@**') && !text.includes('@_**')) {
    return {}
  }
  const parsed = parseMentions(text)
  if (parsed.wildcards.length > 0) {
    metadata.channelMentions = parsed.wildcards
  }
  const resolved = resolveMentions(parsed, ctx.names)
  return resolved.ids.length > 0 ? { mentions: resolved.ids, mentionHandles: resolved.handles } : {}
}

export function decodeMessage(row: Record<string, unknown>, ctx: MessageDecodeContext): LegacyMessage {
  const { lossy } = ctx
  const id = decodeId('id', row.id, lossy)
  const senderId = decodeId('sender_id', row.sender_id, lossy)
  const receiver = receiverOf(row, senderId, ctx)
  const sentAt = decodeTimestamp('date_sent', row.sent_ms, 'epoch-ms')
  if (sentAt === undefined) {
    throw new FieldProblem('date_sent', 'is null')
  }
  const text = decodeText('content', row.content, lossy) ?? ''
  const metadata: JsonObject = {}
  const topic = decodeText('subject', row.subject, lossy)
  if (receiver.receiverType === 'group' && !receiver.receiverId.startsWith('dm-') && topic !== undefined && topic !== DM_TOPIC) {
    metadata.topic = topic
  }
  const edits = summariseEditHistory(row.edit_history, lossy)
  if (edits.metadata !== undefined) {
    metadata.editHistory = edits.metadata
  }
  const attachments = attachmentsOf(row, ctx)
  const message: { -readonly [K in keyof LegacyMessage]: LegacyMessage[K] } = {
    id,
    senderId,
    ...receiver,
    type: attachments ? typeOfAttachments(attachments) : 'text',
    text,
    sentAt,
    ...mentionsOf(text, ctx, metadata),
  }
  if (attachments !== undefined) {
    message.attachments = attachments
  }
  if (Object.keys(metadata).length > 0) {
    message.metadata = metadata
  }
  const editedAt = decodeTimestamp('last_edit_time', row.edited_ms, 'epoch-ms') ?? edits.lastAt
  if (editedAt !== undefined) {
    message.editedAt = editedAt
  }
  const deletedAt = decodeTimestamp('archivetransaction.timestamp', row.deleted_ms, 'epoch-ms')
  if (deletedAt !== undefined) {
    message.deletedAt = deletedAt
  }
  const reactions = reactionsOf(row, lossy)
  if (reactions !== undefined) {
    message.reactions = reactions
  }
  const systemKind = systemKindOf(row)
  if (systemKind !== undefined) {
    message.systemKind = systemKind
  }
  // As the query's `changed_at`: the latest of sent, edited and archived.
  message.updatedAt = Math.max(sentAt, decodeTimestamp('last_edit_time', row.edited_ms, 'epoch-ms') ?? 0, deletedAt ?? 0)
  return message
}
