/**
 * Twilio Conversations resources → canonical records (README: the mapping). Chat identities are
 * users; an SMS or WhatsApp participant (a `messaging_binding`, no identity) is a user named by its
 * address under `nonChatParticipants: users`, or left out under `drop`; every conversation is a
 * private group, archived when its `state` is `closed`; media become files read through the
 * connector's own reader (the Media Content Service needs the account's credentials).
 */
import type {
  JsonObject,
  LegacyAttachment,
  LegacyGroup,
  LegacyMember,
  LegacyMessage,
  LegacyMessageType,
  LegacyUser,
} from '../../../src/model/records.ts'
import { attributesOf, FieldProblem, isObject, required, str, timeMs } from './fields.ts'

export interface Policy {
  readonly nonChatParticipants: 'users' | 'drop'
}

/** The user id of a participant: its identity, or its binding's address (SMS/WhatsApp). */
export function participantUserId(p: JsonObject, policy: Policy): string {
  const identity = str(p.identity)
  if (identity !== undefined) {
    return identity
  }
  const binding = isObject(p.messaging_binding) ? p.messaging_binding : undefined
  const address = str(binding?.address)
  if (address === undefined) {
    throw new FieldProblem('identity', 'the participant has neither an identity nor a messaging_binding address')
  }
  if (policy.nonChatParticipants === 'drop') {
    throw new FieldProblem('messaging_binding', `an ${String(binding?.type ?? 'SMS')} participant: nonChatParticipants is drop`)
  }
  return address
}

export function decodeUser(u: JsonObject): LegacyUser {
  const id = required('identity', u.identity)
  const attributes = attributesOf(u.attributes)
  const createdAt = timeMs('date_created', u.date_created)
  const updatedAt = timeMs('date_updated', u.date_updated)
  const metadata: JsonObject = { twilioSid: u.sid, ...(str(u.role_sid) ? { roleSid: u.role_sid } : {}), ...(attributes ? { attributes } : {}) }
  return {
    id,
    name: str(u.friendly_name) ?? id,
    metadata,
    ...(createdAt !== undefined ? { createdAt } : {}),
    isBot: false,
    ...(updatedAt !== undefined ? { updatedAt } : {}),
  }
}

/** A user for an SMS/WhatsApp address (`nonChatParticipants: users`). */
export function addressUser(address: string, type: string, firstSeen: number | undefined): LegacyUser {
  return {
    id: address,
    name: address,
    metadata: { messagingBinding: type },
    ...(firstSeen !== undefined ? { createdAt: firstSeen } : {}),
    isBot: false,
  }
}

export function decodeConversation(c: JsonObject): LegacyGroup {
  const id = required('sid', c.sid)
  const state = str(c.state) ?? 'active'
  const createdAt = timeMs('date_created', c.date_created)
  const updatedAt = timeMs('date_updated', c.date_updated)
  const attributes = attributesOf(c.attributes)
  return {
    id,
    name: str(c.friendly_name) ?? str(c.unique_name) ?? id,
    type: 'private',
    metadata: {
      serviceSid: c.chat_service_sid,
      state,
      ...(str(c.unique_name) ? { uniqueName: c.unique_name } : {}),
      ...(attributes ? { attributes } : {}),
    },
    ...(createdAt !== undefined ? { createdAt } : {}),
    ...(state === 'closed' ? { archivedAt: updatedAt ?? createdAt ?? 0 } : {}),
    ...(updatedAt !== undefined ? { updatedAt } : {}),
  }
}

export function decodeParticipant(conversation: string, p: JsonObject, policy: Policy): LegacyMember {
  const userId = participantUserId(p, policy)
  const joinedAt = timeMs('date_created', p.date_created)
  const updatedAt = timeMs('date_updated', p.date_updated)
  return {
    groupId: conversation,
    userId,
    scope: 'participant',
    banned: false,
    ...(joinedAt !== undefined ? { joinedAt } : {}),
    ...(updatedAt !== undefined ? { updatedAt } : {}),
  }
}

function typeOf(contentType: string | undefined): LegacyMessageType {
  const top = contentType?.split('/')[0]
  return top === 'image' || top === 'video' || top === 'audio' ? top : 'file'
}

export interface MessageContext {
  readonly conversation: string
  readonly serviceSid: string
  readonly mediaBaseUrl: string
  /** Authors that are non-chat addresses, when their messages are dropped. */
  readonly droppedAuthors: ReadonlySet<string>
}

export function decodeMessage(m: JsonObject, ctx: MessageContext): LegacyMessage {
  const id = required('sid', m.sid)
  const senderId = required('author', m.author)
  if (ctx.droppedAuthors.has(senderId)) {
    throw new FieldProblem('author', 'from an SMS/WhatsApp participant: nonChatParticipants is drop')
  }
  const sentAt = timeMs('date_created', m.date_created)
  if (sentAt === undefined) {
    throw new FieldProblem('date_created', 'date_created is missing')
  }
  const updatedAt = timeMs('date_updated', m.date_updated)
  const media = Array.isArray(m.media) ? m.media.filter(isObject) : []
  const attachments: LegacyAttachment[] = media.map((x, i) => {
    const sid = required(`media[${i}].sid`, x.sid)
    const url = `${ctx.mediaBaseUrl.replace(/\/$/, '')}/v1/Services/${ctx.serviceSid}/Media/${sid}/Content`
    const name = str(x.filename) ?? sid
    const dot = name.lastIndexOf('.')
    return {
      url,
      name,
      ...(str(x.content_type) ? { mimeType: x.content_type as string } : {}),
      ...(dot > 0 && dot < name.length - 1 ? { extension: name.slice(dot + 1).toLowerCase() } : {}),
      ...(typeof x.size === 'number' ? { size: x.size } : {}),
      source: { reader: 'twilio-conversations', ref: url, host: new URL(url).host },
    }
  })
  const attributes = attributesOf(m.attributes)
  const text = str(m.body)
  return {
    id,
    senderId,
    receiverType: 'group',
    receiverId: ctx.conversation,
    type: attachments.length > 0 ? typeOf(attachments[0]?.mimeType) : 'text',
    ...(text !== undefined ? { text } : {}),
    ...(attachments.length > 0 ? { attachments } : {}),
    metadata: { index: m.index, ...(str(m.participant_sid) ? { participantSid: m.participant_sid } : {}), ...(attributes ? { attributes } : {}) },
    sentAt,
    ...(updatedAt !== undefined ? { updatedAt } : {}),
  }
}
