/**
 * Generic SQL messages: `id, sender_id, receiver_type, receiver_id, sent_at` required; attachments,
 * reactions and mentions as JSON (see README.md for their shapes).
 */
import { type LegacyAttachment, type LegacyMessage, type LegacyReaction, MESSAGE_KINDS } from '../../../src/model/records.ts'
import {
  compact,
  decodeChoice,
  decodeCount,
  decodeId,
  decodeJson,
  decodeOptionalId,
  decodeOptionalText,
  decodeRequiredText,
  decodeStringList,
  decodeText,
  decodeTimestamp,
  FieldProblem,
  printableId,
  type TimeFormat,
} from '../../sql/decode.ts'
import type { DecodeContext, EntitySpec } from './entity-spec.ts'

const RECEIVER_TYPES = ['user', 'group'] as const

function attachmentsOf(value: unknown, lossy: boolean, locate: DecodeContext['locate']): LegacyAttachment[] | undefined {
  const list = decodeJson('attachments', value, 'array', lossy)
  if (list === undefined) {
    return undefined
  }
  return list.map((item, i) => {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) {
      throw new FieldProblem('attachments', `item ${i} is not an object`)
    }
    const a = item as Record<string, unknown>
    const url = decodeRequiredText('attachments', a.url)
    return compact<LegacyAttachment>({
      url,
      name: decodeOptionalText('attachments', a.name) ?? decodeURIComponent(url.split(/[/?#]/).filter(Boolean).pop() ?? url),
      mimeType: decodeOptionalText('attachments', a.mimeType ?? a.mime_type),
      extension: decodeOptionalText('attachments', a.extension),
      size: decodeCount('attachments', a.size),
      source: locate?.(a),
    })
  })
}

function reactionsOf(value: unknown, tf: TimeFormat, lossy: boolean): LegacyReaction[] | undefined {
  const list = decodeJson('reactions', value, 'array', lossy)
  if (list === undefined) {
    return undefined
  }
  return list.map((item, i) => {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) {
      throw new FieldProblem('reactions', `item ${i} is not an object`)
    }
    const r = item as Record<string, unknown>
    return compact<LegacyReaction>({
      emoji: decodeRequiredText('reactions', r.emoji),
      userId: decodeId('reactions', r.userId ?? r.user_id),
      at: decodeTimestamp('reactions', r.at, tf === 'iso' ? 'auto' : tf),
    })
  })
}

export const messages: EntitySpec<'messages'> = {
  entity: 'messages',
  required: ['id', 'sender_id', 'receiver_type', 'receiver_id', 'sent_at'],
  optional: [
    'type',
    'text',
    'attachments',
    'custom_data',
    'metadata',
    'edited_at',
    'deleted_at',
    'parent_id',
    'reactions',
    'mentions',
    'delivered_at',
    'read_at',
    'system_kind',
    'updated_at',
  ],
  defaultKeys: ['sent_at', 'id'],
  idColumns: ['id'],
  deltaColumns: ['updated_at', 'sent_at'],
  decode(row, { timeFormat: tf, lossy, locate }): LegacyMessage {
    const sentAt = decodeTimestamp('sent_at', row.sent_at, tf)
    if (sentAt === undefined) {
      throw new FieldProblem('sent_at', 'is null')
    }
    return compact<LegacyMessage>({
      id: decodeId('id', row.id, lossy),
      senderId: decodeId('sender_id', row.sender_id, lossy),
      receiverType: decodeChoice('receiver_type', row.receiver_type, RECEIVER_TYPES),
      receiverId: decodeId('receiver_id', row.receiver_id, lossy),
      type: decodeChoice('type', row.type, MESSAGE_KINDS, 'text'),
      text: decodeText('text', row.text, lossy),
      attachments: attachmentsOf(row.attachments, lossy, locate),
      customData: decodeJson('custom_data', row.custom_data, 'object', lossy),
      metadata: decodeJson('metadata', row.metadata, 'object', lossy),
      sentAt,
      editedAt: decodeTimestamp('edited_at', row.edited_at, tf),
      deletedAt: decodeTimestamp('deleted_at', row.deleted_at, tf),
      threadParentId: decodeOptionalId('parent_id', row.parent_id, lossy),
      reactions: reactionsOf(row.reactions, tf, lossy),
      mentions: decodeStringList('mentions', row.mentions, lossy),
      deliveredAt: decodeTimestamp('delivered_at', row.delivered_at, tf),
      readAt: decodeTimestamp('read_at', row.read_at, tf),
      systemKind: decodeOptionalText('system_kind', row.system_kind, lossy),
      updatedAt: decodeTimestamp('updated_at', row.updated_at, tf),
    })
  },
  legacyIdOf: (row) => printableId(row.id),
}
