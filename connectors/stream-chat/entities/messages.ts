/**
 * A Stream Chat message → LegacyMessage. Replies keep their root (`parent_id`; a reply also shown
 * in the channel says so in metadata), reactions come from the message's `latest_reactions` (v1)
 * and the export's reaction lines (v2), `deleted_at` and the `deleted` type are soft deletes,
 * `message_text_updated_at` is the edit time, pins and custom fields go to metadata (README).
 * Notes, for the plan's policy outcomes: `distinctChannels: direct-message` (a one-to-one
 * channel's message), `pinned: in-metadata`, `attachments: in-metadata` (link previews, giphy,
 * custom attachments), `latestReactions: some-missing` (v1 and the API: `reaction_counts` counts more
 * than `latest_reactions`), `customFields: in-metadata | dropped`.
 */
import type { EpochMs, JsonObject, LegacyMessage, LegacyReaction } from '../../../src/model/records.ts'
import type { OutcomeList } from '../../rows/outcomes.ts'
import { decodeAttachments } from './attachments.ts'
import { customFields, FieldProblem, isObject, noteCustom, requiredTimeMs, str, streamId, timeMs, userIdOf } from './fields.ts'

const KNOWN = new Set([
  'id',
  'text',
  'html',
  'type',
  'user',
  'user_id',
  'attachments',
  'latest_reactions',
  'own_reactions',
  'reaction_counts',
  'reaction_scores',
  'reaction_groups',
  'reply_count',
  'deleted_reply_count',
  'cid',
  'channel_id',
  'channel_type',
  'created_at',
  'updated_at',
  'deleted_at',
  'message_text_updated_at',
  'shadowed',
  'mentioned_users',
  'silent',
  'pinned',
  'pinned_at',
  'pinned_by',
  'pin_expires',
  'parent_id',
  'show_in_channel',
  'thread_participants',
  'quoted_message_id',
  'quoted_message',
  'i18n',
  'image_labels',
  'command',
  'args',
  'before_message_send_failed',
  'restricted_visibility',
  'poll_id',
  'poll',
  'channel_member_ids',
  'mml',
  'draft',
  'reminder',
  'shared_location',
  'member',
])

/** Where a message goes: a group (its cid), or the other member of a one-to-one channel. */
export interface ChannelTarget {
  readonly cid: string
  /** The two members of a one-to-one channel. */
  readonly pair?: readonly [string, string]
}

export interface MessageContext {
  readonly channel: ChannelTarget
  readonly keepCustom: boolean
  /** The export's reaction lines for this message (v2). */
  readonly reactions?: readonly LegacyReaction[] | undefined
}

function decodeReactions(v: unknown, extra: readonly LegacyReaction[] = []): readonly LegacyReaction[] {
  if (v !== undefined && v !== null && !Array.isArray(v)) {
    throw new FieldProblem('latest_reactions', 'latest_reactions is not an array')
  }
  if (!Array.isArray(v) || v.length === 0) {
    return extra
  }
  const seen = new Set(extra.map((r) => `${r.userId}\u0000${r.emoji}`))
  const out = [...extra]
  for (const [i, r] of v.entries()) {
    const reaction = decodeReaction(`latest_reactions[${i}]`, r)
    const key = `${reaction.userId}\u0000${reaction.emoji}`
    if (!seen.has(key)) {
      seen.add(key)
      out.push(reaction)
    }
  }
  return out
}

/** One reaction object (`{type, user_id | user, created_at}`). */
export function decodeReaction(field: string, r: unknown): LegacyReaction {
  if (!isObject(r)) {
    throw new FieldProblem(field, `${field} is not an object`)
  }
  const emoji = streamId(`${field}.type`, r.type)
  const userId = r.user_id !== undefined ? streamId(`${field}.user_id`, r.user_id) : userIdOf(`${field}.user`, r.user)
  const at = timeMs(`${field}.created_at`, r.created_at)
  return { emoji, userId, ...(at !== undefined ? { at } : {}) }
}

function mentionsOf(v: unknown): string[] {
  if (v === undefined || v === null) {
    return []
  }
  if (!Array.isArray(v)) {
    throw new FieldProblem('mentioned_users', 'mentioned_users is not an array')
  }
  return v.map((u, i) => userIdOf(`mentioned_users[${i}]`, u))
}

function receiverOf(senderId: string, channel: ChannelTarget): Pick<LegacyMessage, 'receiverType' | 'receiverId'> {
  if (channel.pair === undefined) {
    return { receiverType: 'group', receiverId: channel.cid }
  }
  const [a, b] = channel.pair
  if (senderId !== a && senderId !== b) {
    throw new FieldProblem('user', `the sender ${senderId} is not one of the two members of the one-to-one channel ${channel.cid}`)
  }
  return { receiverType: 'user', receiverId: senderId === a ? b : a }
}

/** The message's change time (created, edited, deleted, updated), for deltas. */
export function messageChangedAt(m: LegacyMessage): EpochMs {
  // `latest` of the four, spelled out (no rest array): this runs once a row.
  let t = m.sentAt
  if (m.editedAt !== undefined) {
    t = Math.max(t, m.editedAt)
  }
  if (m.deletedAt !== undefined) {
    t = Math.max(t, m.deletedAt)
  }
  if (m.updatedAt !== undefined) {
    t = Math.max(t, m.updatedAt)
  }
  return t
}

/** The message's metadata (replies shown in the channel, pins, quotes, commands, other attachments, custom fields), or undefined. */
function metadataOf(
  o: JsonObject,
  ctx: MessageContext,
  parent: string | undefined,
  other: readonly JsonObject[],
  out: OutcomeList | undefined,
): JsonObject | undefined {
  // Made on its first key (most messages have none); keys in the order they are set here.
  let metadata: JsonObject | undefined
  if (parent !== undefined && o.show_in_channel === true) {
    ;(metadata ??= {}).showInChannel = true
  }
  if (o.pinned === true) {
    const pinnedAt = timeMs('pinned_at', o.pinned_at)
    const pinnedBy = isObject(o.pinned_by) ? str(o.pinned_by.id) : str(o.pinned_by)
    ;(metadata ??= {}).pinned = { ...(pinnedAt !== undefined ? { at: pinnedAt } : {}), ...(pinnedBy !== undefined ? { by: pinnedBy } : {}) }
  } else {
    timeMs('pinned_at', o.pinned_at) // read for its problem only
  }
  if (str(o.quoted_message_id) !== undefined) {
    ;(metadata ??= {}).quotedMessageId = o.quoted_message_id
  }
  if (o.silent === true) {
    ;(metadata ??= {}).silent = true
  }
  if (str(o.command) !== undefined) {
    ;(metadata ??= {}).command = o.command
  }
  if (other.length > 0) {
    ;(metadata ??= {}).streamAttachments = other as JsonObject[]
  }
  const custom = ctx.keepCustom || out !== undefined ? customFields(o, KNOWN) : undefined
  noteCustom(out, custom, ctx.keepCustom)
  if (custom !== undefined && ctx.keepCustom) {
    ;(metadata ??= {}).custom = custom
  }
  return metadata
}

/** A message; its keys are set one by one, in the order the canonical record lists them (no spread: it runs once a row). */
export function decodeMessage(o: JsonObject, ctx: MessageContext, out?: OutcomeList): LegacyMessage {
  const id = streamId('id', o.id)
  const senderId = o.user_id !== undefined && o.user === undefined ? streamId('user_id', o.user_id) : userIdOf('user', o.user)
  const sentAt = requiredTimeMs('created_at', o.created_at)
  const editedAt = timeMs('message_text_updated_at', o.message_text_updated_at)
  const deletedAt = timeMs('deleted_at', o.deleted_at) ?? (o.type === 'deleted' ? (timeMs('updated_at', o.updated_at) ?? sentAt) : undefined)
  const updatedAt = timeMs('updated_at', o.updated_at)
  const parent = o.parent_id === undefined || o.parent_id === null || o.parent_id === '' ? undefined : streamId('parent_id', o.parent_id)
  const files = decodeAttachments(o.attachments)
  const reactions = decodeReactions(o.latest_reactions, ctx.reactions)
  const mentions = mentionsOf(o.mentioned_users)
  const text = typeof o.text === 'string' && o.text !== '' ? o.text : undefined
  const metadata = metadataOf(o, ctx, parent, files.other, out)
  const receiver = receiverOf(senderId, ctx.channel)
  if (out !== undefined) {
    noteMessage(out, o, ctx, metadata)
  }
  const m = { id, senderId, receiverType: receiver.receiverType, receiverId: receiver.receiverId, type: files.type ?? 'text' } as {
    -readonly [K in keyof LegacyMessage]: LegacyMessage[K]
  }
  if (text !== undefined) {
    m.text = text
  }
  if (files.attachments.length > 0) {
    m.attachments = files.attachments
  }
  if (metadata !== undefined) {
    m.metadata = metadata
  }
  m.sentAt = sentAt
  if (editedAt !== undefined) {
    m.editedAt = editedAt
  }
  if (deletedAt !== undefined) {
    m.deletedAt = deletedAt
  }
  if (parent !== undefined) {
    m.threadParentId = parent
  }
  if (reactions.length > 0) {
    m.reactions = reactions
  }
  if (mentions.length > 0) {
    m.mentions = mentions
  }
  if (o.type === 'system') {
    m.systemKind = 'system'
  }
  if (updatedAt !== undefined) {
    m.updatedAt = updatedAt
  }
  return m
}

/** The message's policy outcomes besides its custom fields (README: the mapping). */
function noteMessage(out: OutcomeList, o: JsonObject, ctx: MessageContext, metadata: JsonObject | undefined): void {
  if (ctx.channel.pair !== undefined) {
    out.add('distinctChannels', 'direct-message')
  }
  if (metadata?.pinned !== undefined) {
    out.add('pinned', 'in-metadata')
  }
  if (metadata?.streamAttachments !== undefined) {
    out.add('attachments', 'in-metadata')
  }
  if (ctx.reactions === undefined && isObject(o.reaction_counts)) {
    const total = Object.values(o.reaction_counts).reduce<number>((a, n) => a + (typeof n === 'number' ? n : 0), 0)
    if (total > (Array.isArray(o.latest_reactions) ? o.latest_reactions.length : 0)) {
      out.add('latestReactions', 'some-missing')
    }
  }
}
