/**
 * A Sendbird message (the `messages` export's record, the Platform API's message resource) →
 * LegacyMessage. `MESG` user messages, `FILE` file messages (the file an attachment read over
 * HTTP by the files lane), `ADMM` admin messages (system messages). Messages of a one-to-one
 * channel go to the other member; the rest to the channel as a group. Notes, for the plan's policy
 * outcomes: `adminMessages: system-message`, `oneToOneChannels: direct-message`, and
 * `customType`/`customData`/`metaArray: in-metadata`.
 */
import type { LegacyAttachment, LegacyMessage, LegacyMessageType, LegacyReaction } from '../../../src/model/records.ts'
import type { OutcomeList } from '../../rows/outcomes.ts'
import { bool, dataField, defined, FieldProblem, id, isObject, num, requiredTime, str, time, userIdOf } from '../fields.ts'

/** The two members of a one-to-one channel, by its URL (undefined: a group). */
export type DirectOf = (channelUrl: string) => readonly [string, string] | undefined

const TYPES = new Set(['MESG', 'FILE', 'ADMM'])

/** The id a message row is known by even when it is bad (`?` without a usable `message_id`). */
export const messageIdOf = (o: unknown): string => (isObject(o) ? (str(o.message_id) ?? '?') : '?')

export function sendbirdMessage(o: unknown, directOf: DirectOf, out?: OutcomeList): LegacyMessage {
  if (!isObject(o)) {
    throw new FieldProblem('message', 'the message is not an object')
  }
  const messageId = id('message_id', o.message_id)
  const type = str(o.type)
  if (type === undefined || !TYPES.has(type)) {
    throw new FieldProblem('type', `type ${JSON.stringify(o.type)} is none of MESG, FILE, ADMM`)
  }
  const channelUrl = id('channel_url', o.channel_url)
  const sentAt = requiredTime('created_at', o.created_at)
  const admin = type === 'ADMM'
  const sender = userIdOf(o.user)
  if (sender === undefined && !admin) {
    throw new FieldProblem('user.user_id', `a ${type} message without its sender (user.user_id)`)
  }
  const updated = time('updated_at', o.updated_at)
  const removed = bool(o.is_removed)
  const direct = directOf(channelUrl)
  const receiverId = direct === undefined ? channelUrl : direct[0] === sender ? direct[1] : direct[0]
  const attachments = type === 'FILE' ? fileAttachments(o) : []
  const parent = num('parent_message_id', o.parent_message_id)
  const mentions = Array.isArray(o.mentioned_users) ? o.mentioned_users.map(userIdOf).filter((u): u is string => u !== undefined) : []
  const reactions = reactionsOf(o.reactions)
  const metadata = metadataOf(o, direct === undefined ? undefined : channelUrl)
  const edited = !removed && updated !== undefined && updated > sentAt ? updated : undefined
  // Keys set one by one in the canonical record's order (this runs once a row: no spread, no filter of undefined).
  const m = {
    id: messageId,
    senderId: sender ?? '',
    receiverType: direct === undefined ? ('group' as const) : ('user' as const),
    receiverId,
    type: messageType(attachments),
  } as { -readonly [K in keyof LegacyMessage]: LegacyMessage[K] }
  const text = str(o.message)
  if (text !== undefined) {
    m.text = text
  }
  if (attachments.length > 0) {
    m.attachments = attachments
  }
  if (metadata !== undefined) {
    m.metadata = metadata
  }
  m.sentAt = sentAt
  if (edited !== undefined) {
    m.editedAt = edited
  }
  if (removed) {
    m.deletedAt = updated ?? sentAt
  }
  if (parent !== undefined && parent !== 0) {
    m.threadParentId = String(parent)
  }
  if (reactions.length > 0) {
    m.reactions = reactions
  }
  if (mentions.length > 0) {
    m.mentions = mentions
  }
  if (admin) {
    m.systemKind = 'admin_message'
  }
  m.updatedAt = Math.max(sentAt, updated ?? 0)
  if (out !== undefined) {
    noteMessage(out, admin, direct !== undefined, metadata)
  }
  return m
}

/** The message's metadata (`customType`, `data`, `metaArray`, the one-to-one channel's URL, flags), or undefined when it has none. */
function metadataOf(o: Record<string, unknown>, directChannelUrl: string | undefined): Record<string, unknown> | undefined {
  const customType = str(o.custom_type)
  const data = dataField(o.data)
  const metaArray = metaArrayOf(o.sorted_metaarray)
  const channel = o.mention_type === 'channel'
  const operator = bool(o.is_op_msg)
  const silent = bool(o.silent)
  if (
    customType === undefined &&
    data === undefined &&
    metaArray === undefined &&
    directChannelUrl === undefined &&
    !channel &&
    !operator &&
    !silent
  ) {
    return undefined
  }
  return defined({
    customType,
    data,
    metaArray,
    channelUrl: directChannelUrl,
    mentionType: channel ? 'channel' : undefined,
    operatorMessage: operator || undefined,
    silent: silent || undefined,
  })
}

/** `file` (one file) and `files` (a multiple-files message): each with a `url`. */
function fileAttachments(o: Record<string, unknown>): LegacyAttachment[] {
  const files = [...(isObject(o.file) ? [o.file] : []), ...(Array.isArray(o.files) ? o.files.filter(isObject) : [])]
  return files.flatMap((f, i) => {
    const url = str(f.url)
    if (url === undefined) {
      return []
    }
    let host: string
    try {
      host = new URL(url).host
    } catch {
      throw new FieldProblem(`file.url`, `file ${i} has no valid URL`)
    }
    const size = num('file.size', f.size)
    return [
      defined({
        url,
        name: str(f.name) ?? str(f.file_name) ?? url.split('/').at(-1) ?? 'file',
        mimeType: str(f.type) ?? str(f.mime_type),
        size: size !== undefined && size > 0 ? size : undefined,
        source: { reader: 'http', ref: url, host },
      }),
    ]
  })
}

/** Image, audio or video when every file is one; else file; text without files. */
function messageType(attachments: readonly LegacyAttachment[]): LegacyMessageType {
  if (attachments.length === 0) {
    return 'text'
  }
  const kinds = new Set(attachments.map((a) => a.mimeType?.split('/')[0]))
  const only = kinds.size === 1 ? [...kinds][0] : undefined
  return only === 'image' || only === 'audio' || only === 'video' ? only : 'file'
}

/** `reactions: [{key, user_ids, updated_at}]` → one reaction per user, `emoji` = the key as written. */
function reactionsOf(v: unknown): LegacyReaction[] {
  if (!Array.isArray(v)) {
    return []
  }
  return v.filter(isObject).flatMap((r) => {
    const key = str(r.key)
    const at = time('reactions.updated_at', r.updated_at)
    if (key === undefined || !Array.isArray(r.user_ids)) {
      return []
    }
    return r.user_ids.flatMap((u) => {
      const userId = str(u)
      return userId === undefined ? [] : [defined({ emoji: key, userId, at })]
    })
  })
}

/** `sorted_metaarray: [{key, value: [..]}]` → `{key: [..]}`. */
function metaArrayOf(v: unknown): Record<string, unknown> | undefined {
  if (!Array.isArray(v) || v.length === 0) {
    return isObject(v) && Object.keys(v).length > 0 ? v : undefined
  }
  return Object.fromEntries(v.filter(isObject).flatMap((e) => (str(e.key) === undefined ? [] : [[str(e.key) as string, e.value]])))
}

/** The message's policy outcomes (README: the mapping). */
function noteMessage(out: OutcomeList, admin: boolean, direct: boolean, metadata: Record<string, unknown> | undefined): void {
  if (admin) {
    out.add('adminMessages', 'system-message')
  }
  if (direct) {
    out.add('oneToOneChannels', 'direct-message')
  }
  if (metadata?.customType !== undefined) {
    out.add('customType', 'in-metadata')
  }
  if (metadata?.data !== undefined) {
    out.add('customData', 'in-metadata')
  }
  if (metadata?.metaArray !== undefined) {
    out.add('metaArray', 'in-metadata')
  }
}
