/**
 * One message object of a per-conversation per-day file (`general/2024-01-02.json`) → a canonical
 * message. Its id is `<conversation id>:<ts>` (Slack's `ts` is unique within a conversation only).
 */
import type { JsonObject, LegacyMessage, LegacyReaction } from '../../../src/model/records.ts'
import { FieldProblem, isObject, slackId, str, tsMs } from './fields.ts'
import { extrasOf } from './message-extras.ts'
import { type FilesContext, filesOf, mayHaveFiles, typeOfAttachments } from './message-files.ts'
import { convertText, type TextLookups, unescapeSlack } from './message-text.ts'

/** Subtypes that record something happening in the conversation rather than something said. */
export const SYSTEM_SUBTYPES = new Set([
  'channel_join',
  'channel_leave',
  'channel_topic',
  'channel_purpose',
  'channel_name',
  'channel_archive',
  'channel_unarchive',
  'channel_convert_to_private',
  'channel_convert_to_public',
  'channel_posting_permissions',
  'group_join',
  'group_leave',
  'group_topic',
  'group_purpose',
  'group_name',
  'group_archive',
  'group_unarchive',
  'pinned_item',
  'unpinned_item',
  'bot_add',
  'bot_remove',
  'sh_room_created',
  'huddle_thread',
  'reminder_add',
])

export type ConversationKind = 'channel' | 'private' | 'mpim' | 'dm'

export interface Conversation {
  readonly id: string
  readonly kind: ConversationKind
  /** The folder holding its day files: the name for channels and group DMs, the id for DMs. */
  readonly folder: string
  /** A DM's two members (`dms.json`). */
  readonly members?: readonly string[]
  /** Why its entry could not become a group (`channels.json#3: created: …`): its messages are problems naming it. */
  readonly refused?: string
}

export interface MessageContext extends TextLookups {
  readonly conversation: Conversation
  readonly fileUrl?: string
  /** Where a file's bytes are, for the files lane (files-locator.ts). */
  readonly locateFile?: FilesContext['locate']
}

/** The message's legacy id. */
export const messageId = (conversationId: string, ts: string) => `${conversationId}:${ts}`

/** Who sent it: `user`, else a file comment's or shared file's user, else the bot's id. */
export function senderOf(m: JsonObject): string | undefined {
  return str(m.user) ?? (isObject(m.comment) ? str(m.comment.user) : undefined) ?? (isObject(m.file) ? str(m.file.user) : undefined) ?? str(m.bot_id)
}

/** When it last changed: the edit's time, else its own. */
export function changedAt(m: JsonObject): number {
  const sent = tsMs('ts', m.ts)
  const edited = isObject(m.edited) && typeof m.edited.ts === 'string' ? tsMs('edited.ts', m.edited.ts) : undefined
  return edited !== undefined && edited > sent ? edited : sent
}

/** A message without reactions: one shared answer. */
const NO_REACTIONS = Object.freeze({})

/**
 * One reaction per listed user. Slack's `users` may name fewer reactors than `count` (its API caps
 * the list; `count` is always the total): the reactors it does not name cannot become reactions, so
 * how many there were is kept per emoji in `unlisted` rather than lost without a word.
 */
function reactionsOf(m: JsonObject): { reactions?: LegacyReaction[]; unlisted?: JsonObject[] } {
  if (!Array.isArray(m.reactions)) {
    return NO_REACTIONS
  }
  const out: LegacyReaction[] = []
  const unlisted: JsonObject[] = []
  for (const r of m.reactions) {
    if (!isObject(r) || typeof r.name !== 'string' || !Array.isArray(r.users)) {
      throw new FieldProblem('reactions', 'a reaction has no name or users')
    }
    for (const u of r.users) {
      out.push({ emoji: r.name, userId: slackId('reactions.users', u) })
    }
    if (typeof r.count === 'number' && Number.isInteger(r.count) && r.count > r.users.length) {
      unlisted.push({ emoji: r.name, count: r.count - r.users.length })
    }
  }
  return { ...(out.length > 0 ? { reactions: out } : {}), ...(unlisted.length > 0 ? { unlisted } : {}) }
}

function receiverOf(conv: Conversation, sender: string): { receiverType: 'user' | 'group'; receiverId: string } {
  if (conv.kind !== 'dm') {
    return { receiverType: 'group', receiverId: conv.id }
  }
  const [a, b] = conv.members ?? []
  if (a === undefined || b === undefined) {
    throw new FieldProblem('members', `the DM ${conv.id} has no two members in dms.json`)
  }
  if (sender !== a && sender !== b) {
    throw new FieldProblem('user', `the sender ${sender} is not a member of the DM ${conv.id} (${a}, ${b})`)
  }
  return { receiverType: 'user', receiverId: sender === a ? b : a }
}

/** Two texts as paragraphs, either of them possibly empty. */
const joined = (a: string, b: string): string => (a === '' ? b : b === '' ? a : `${a}\n\n${b}`)

export function decodeMessage(m: unknown, ctx: MessageContext): LegacyMessage {
  if (!isObject(m)) {
    throw new FieldProblem('message', 'the entry is not a JSON object')
  }
  const conv = ctx.conversation
  const ts = m.ts as string
  const sentAt = tsMs('ts', m.ts)
  const senderRaw = senderOf(m)
  if (senderRaw === undefined) {
    throw new FieldProblem('user', 'the message has no user, bot_id, file.user or comment.user')
  }
  const senderId = slackId('user', senderRaw)
  const subtype = str(m.subtype)
  const own = typeof m.text === 'string' ? m.text : ''
  const extras = extrasOf(m, own, ctx.handleOf)
  const converted = convertText(joined(own, extras.attachmentText), ctx)
  const text = joined(converted.text, extras.blockText)
  const files = mayHaveFiles(m)
    ? filesOf(m, { template: ctx.fileUrl, conversationId: conv.id, ...(ctx.locateFile === undefined ? {} : { locate: ctx.locateFile }) })
    : undefined
  const receiver = receiverOf(conv, senderId)
  // Keys set in the canonical record's order, without a spread (this runs once a message).
  const message: { -readonly [K in keyof LegacyMessage]: LegacyMessage[K] } = {
    id: messageId(conv.id, ts),
    senderId,
    receiverType: receiver.receiverType,
    receiverId: receiver.receiverId,
    type: files !== undefined && files.attachments.length > 0 ? typeOfAttachments(files.attachments) : 'text',
    text,
    sentAt,
  }
  if (files !== undefined && files.attachments.length > 0) {
    message.attachments = files.attachments
  }
  const metadata: JsonObject = {}
  if (subtype !== undefined && !SYSTEM_SUBTYPES.has(subtype)) {
    metadata.subtype = subtype
  }
  if (subtype !== undefined && SYSTEM_SUBTYPES.has(subtype)) {
    message.systemKind = subtype
  }
  if (subtype === 'tombstone') {
    // A deleted thread root Slack keeps for its replies ("This message was deleted.").
    message.deletedAt = changedAt(m)
  }
  if (files !== undefined && files.unavailable.length > 0) {
    metadata.unavailableFiles = files.unavailable
  }
  if (extras.linkPreviews.length > 0) {
    metadata.linkPreviews = extras.linkPreviews
  }
  if (extras.otherBlocks.length > 0) {
    metadata.otherBlocks = extras.otherBlocks
  }
  if (converted.channelMentions.length > 0) {
    metadata.channelMentions = converted.channelMentions
  }
  const botName = subtype === 'bot_message' ? str(m.username) : undefined
  if (botName !== undefined) {
    metadata.botName = unescapeSlack(botName)
  }
  const profileName = isObject(m.user_profile) ? (str(m.user_profile.real_name) ?? str(m.user_profile.display_name)) : undefined
  if (profileName !== undefined) {
    metadata.senderName = profileName
  }
  if (Array.isArray(m.pinned_to) && m.pinned_to.length > 0) {
    metadata.pinned = true
  }
  const { reactions, unlisted } = reactionsOf(m)
  if (unlisted !== undefined) {
    metadata.unlistedReactions = unlisted
  }
  for (const _ in metadata) {
    message.metadata = metadata
    break
  }
  if (isObject(m.edited)) {
    message.editedAt = tsMs('edited.ts', m.edited.ts)
    message.updatedAt = Math.max(message.editedAt, sentAt)
  }
  if (m.thread_ts !== undefined && m.thread_ts !== ts) {
    tsMs('thread_ts', m.thread_ts)
    message.threadParentId = `${conv.id}:${m.thread_ts as string}`
  }
  if (reactions !== undefined) {
    message.reactions = reactions
  }
  if (converted.mentions.length > 0) {
    message.mentions = converted.mentions
    if (Object.keys(converted.handles).length > 0) {
      message.mentionHandles = converted.handles
    }
  }
  return message
}
