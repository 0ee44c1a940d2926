/**
 * `rocketchat_message` documents → `LegacyMessage` (edit-history copies, `_hidden` with `parent`,
 * are never read: see the reader's filter).
 * - room `c`/`p`/group DM → to the group `rid`; a direct room of one or two users → to the other
 *   user (a self-DM: to the sender);
 * - `tmid` → threadParentId; `editedAt` → editedAt (its editor in metadata when not the sender);
 * - deleted: `t: 'rm'` (Message_ShowDeletedStatus: text already emptied by Rocket.Chat, deleted at
 *   its `editedAt`) or `_hidden` without `parent` (Message_KeepHistory without the status: text
 *   kept, deleted at `_updatedAt`);
 * - any other `t` → a system message (`systemKind`); `discussion-created` names its discussion
 *   room (`drid`) in metadata; `e2e` (end-to-end encrypted) is a problem: its text is ciphertext;
 * - `reactions` `{":emoji:": {usernames}}` → one reaction per user (usernames resolved through
 *   `users.bson`; an unknown one is kept in metadata); `mentions` → ids and handles, `all`/`here`
 *   in metadata; `files` (or the older single `file`) → attachments by URL, generated thumbnails
 *   left out, an upload's caption (its card's `description`) the text when `msg` is empty;
 * - an app's UI-kit `blocks` (block-text.ts), other cards (integration posts, quotes:
 *   `attachments[]`) and a shared `location` rendered as text after it (card-text.ts), what is not
 *   rendered kept in `metadata.attachments`.
 */
import type { FileLocator } from '../../../src/model/files.ts'
import type { JsonObject, LegacyAttachment, LegacyMessage, LegacyMessageType, LegacyReaction } from '../../../src/model/records.ts'
import { blockText } from './block-text.ts'
import { type CardText, cardText, sharedLocation } from './card-text.ts'
import type { RoomKind } from './room-kind.ts'
import {
  compact,
  type Doc,
  FieldProblem,
  optionalArray,
  optionalDoc,
  optionalId,
  optionalText,
  optionalTime,
  requiredId,
  requiredTime,
  userRef,
} from './values.ts'

export interface MessageDecodeContext {
  readonly roomOf: (rid: string) => RoomKind | undefined
  readonly idOfUsername: (username: string) => string | undefined
  /** Base URL of the uploads, without a trailing slash: `<base>/file-upload/<fileId>/<name>`. */
  readonly uploadsBaseUrl: string
  /** The locator of an upload (`source.files` set): see files/locator.ts. */
  readonly locateUpload?: (fileId: string) => FileLocator
}

type Receiver = Pick<LegacyMessage, 'receiverType' | 'receiverId'>

function receiverOf(rid: string, senderId: string, room: RoomKind | undefined): Receiver {
  if (room === undefined) {
    throw new FieldProblem('rid', `room ${rid} is not in rocketchat_room.bson`)
  }
  if (room.kind === 'unknown') {
    throw new FieldProblem('rid', `room ${rid} cannot be read (${room.field}: ${room.reason})`)
  }
  if (room.kind !== 'direct') {
    return { receiverType: 'group', receiverId: rid }
  }
  if (!room.uids.includes(senderId)) {
    throw new FieldProblem('u._id', `sender ${senderId} is not a member of direct room ${rid} (uids ${room.uids.join(', ')})`)
  }
  return { receiverType: 'user', receiverId: room.uids.find((u) => u !== senderId) ?? senderId }
}

const UPLOAD_PATH = /\/file-upload\/([^/?#]+)\//

/**
 * The ids of generated image thumbnails: Rocket.Chat lists a thumbnail in `files` after its image
 * and points the image attachment's `image_url` at it, while `fileId`/`title_link` name the original.
 */
function thumbnailIds(msg: Doc): Set<string> {
  const ids = new Set<string>()
  for (const a of Array.isArray(msg.attachments) ? (msg.attachments as unknown[]) : []) {
    const x = (a ?? {}) as Doc
    const thumb = typeof x.image_url === 'string' ? UPLOAD_PATH.exec(x.image_url)?.[1] : undefined
    const original = typeof x.fileId === 'string' ? x.fileId : typeof x.title_link === 'string' ? UPLOAD_PATH.exec(x.title_link)?.[1] : undefined
    if (thumb !== undefined && original !== undefined && thumb !== original) {
      ids.add(decodeURIComponent(thumb))
    }
  }
  return ids
}

/** The uploaded files: `files` (since 3.x; generated thumbnails left out) else the older single `file`. */
function attachmentsOf(msg: Doc, base: string, locate: MessageDecodeContext['locateUpload']): LegacyAttachment[] | undefined {
  const listed = optionalArray('files', msg.files)
  const files = listed ?? (msg.file === undefined || msg.file === null ? [] : [msg.file])
  if (files.length === 0) {
    return undefined
  }
  const thumbs = listed === undefined ? new Set<string>() : thumbnailIds(msg)
  const list = files.flatMap((f, i) => {
    const at = listed !== undefined ? `files.${i}` : 'file'
    const file = optionalDoc(at, f) ?? {}
    const id = requiredId(`${at}._id`, file._id)
    if (thumbs.has(id)) {
      return []
    }
    const name = optionalText(`${at}.name`, file.name)?.trim() || id
    const size = file.size
    return [
      compact<LegacyAttachment>({
        url: `${base}/file-upload/${encodeURIComponent(id)}/${encodeURIComponent(name)}`,
        name,
        mimeType: optionalText(`${at}.type`, file.type) || undefined,
        extension: optionalText(`${at}.format`, file.format) || /\.([A-Za-z0-9]{1,10})$/.exec(name)?.[1]?.toLowerCase(),
        size: typeof size === 'number' && Number.isInteger(size) && size >= 0 ? size : undefined,
        source: locate?.(id),
      }),
    ]
  })
  return list.length > 0 ? list : undefined
}

/** image/audio/video when every file is one, else file. */
function typeOfFiles(attachments: readonly LegacyAttachment[]): LegacyMessageType {
  const kinds = new Set(attachments.map((a) => /^(image|audio|video)\//.exec(a.mimeType ?? '')?.[1] ?? 'file'))
  return kinds.size === 1 ? ([...kinds][0] as LegacyMessageType) : 'file'
}

function reactionsOf(msg: Doc, ctx: MessageDecodeContext, metadata: JsonObject): LegacyReaction[] | undefined {
  // `reactions: []` is what old versions left on a deleted message.
  if (msg.reactions === undefined || msg.reactions === null || Array.isArray(msg.reactions)) {
    return undefined
  }
  const map = optionalDoc('reactions', msg.reactions) ?? {}
  const reactions: LegacyReaction[] = []
  const unresolved: JsonObject[] = []
  for (const [key, value] of Object.entries(map)) {
    const emoji = key.replace(/^:|:$/g, '')
    const who = optionalDoc(`reactions.${key}`, value) ?? {}
    for (const username of optionalArray(`reactions.${key}.usernames`, who.usernames) ?? []) {
      const userId = typeof username === 'string' ? ctx.idOfUsername(username) : undefined
      if (userId === undefined) {
        unresolved.push({ emoji, username: typeof username === 'string' ? username : null })
      } else {
        reactions.push({ emoji, userId })
      }
    }
  }
  if (unresolved.length > 0) {
    metadata.unresolvedReactions = unresolved
  }
  return reactions.length > 0 ? reactions : undefined
}

interface Mentions {
  ids?: string[]
  handles?: Record<string, string>
}

function mentionsOf(msg: Doc, metadata: JsonObject): Mentions {
  const list = optionalArray('mentions', msg.mentions) ?? []
  const ids: string[] = []
  const handles: Record<string, string> = {}
  const wide: string[] = []
  list.forEach((m, i) => {
    const mention = optionalDoc(`mentions.${i}`, m) ?? {}
    const id = optionalId(`mentions.${i}._id`, mention._id)
    if (id === 'all' || id === 'here') {
      wide.push(id)
    } else if (id !== undefined && mention.type !== 'team' && !ids.includes(id)) {
      ids.push(id)
      const username = optionalText(`mentions.${i}.username`, mention.username)
      if (username) {
        handles[username.toLowerCase()] = id
      }
    }
  })
  if (wide.length > 0) {
    metadata.channelMentions = wide
  }
  return ids.length > 0 ? { ids, handles } : {}
}

const isUploadCard = (a: Doc) => typeof a.fileId === 'string' || (typeof a.title_link === 'string' && UPLOAD_PATH.test(a.title_link))

/**
 * The cards that are no upload cards (integration cards, quotes, link previews), rendered as text
 * (card-text.ts): an integration post's content is often only there, with `msg` empty.
 */
function cardsOf(msg: Doc): CardText {
  return cardText((optionalArray('attachments', msg.attachments) ?? []).filter((a) => !isUploadCard((a ?? {}) as Doc)))
}

/** The caption typed with an upload: Rocket.Chat keeps it in the upload card's `description`, `msg` empty. */
function uploadCaption(msg: Doc): string | undefined {
  const list = Array.isArray(msg.attachments) ? (msg.attachments as unknown[]).map((a) => (a ?? {}) as Doc) : []
  const captions = list
    .filter((a) => isUploadCard(a) && typeof a.description === 'string' && a.description.trim() !== '')
    .map((a) => a.description as string)
  return captions.length > 0 ? captions.join('\n') : undefined
}

export function decodeMessage(msg: Doc, ctx: MessageDecodeContext): LegacyMessage {
  const id = requiredId('_id', msg._id)
  const rid = requiredId('rid', msg.rid)
  const sender = userRef('u', msg.u, true) as { id: string; username?: string }
  const receiver = receiverOf(rid, sender.id, ctx.roomOf(rid))
  const sentAt = requiredTime('ts', msg.ts)
  const t = optionalText('t', msg.t) || undefined
  if (t === 'e2e') {
    throw new FieldProblem('msg', 'is end-to-end encrypted (t: e2e): the database holds only ciphertext')
  }
  const removed = t === 'rm'
  const hidden = msg._hidden === true
  const editedAt = optionalTime('editedAt', msg.editedAt)
  const updatedAt = optionalTime('_updatedAt', msg._updatedAt)
  const metadata: JsonObject = {}
  const attachments = removed ? undefined : attachmentsOf(msg, ctx.uploadsBaseUrl, ctx.locateUpload)
  const reactions = removed ? undefined : reactionsOf(msg, ctx, metadata)
  const mentions = removed ? {} : mentionsOf(msg, metadata)
  const editor = optionalDoc('editedBy', msg.editedBy)
  if (editedAt !== undefined && !removed && editor !== undefined && editor._id !== sender.id) {
    metadata.editedBy = optionalId('editedBy._id', editor._id) ?? null
  }
  const drid = optionalText('drid', msg.drid)
  if (drid) {
    metadata.discussionId = drid
  }
  const cards = removed ? undefined : cardsOf(msg)
  if (cards?.leftover !== undefined) {
    metadata.attachments = cards.leftover
  }
  if (cards !== undefined && cards.rendered > 0) {
    metadata.attachmentsAsText = cards.rendered
  }
  const blocks = removed ? undefined : blockText(msg.blocks)
  if (blocks !== undefined && blocks.rendered > 0) {
    metadata.blocksAsText = blocks.rendered
  }
  const location = removed ? undefined : sharedLocation(msg.location)
  if (location !== undefined) {
    metadata.location = { latitude: location.latitude, longitude: location.longitude }
  }
  const alias = optionalText('alias', msg.alias)
  if (alias) {
    metadata.alias = alias
  }
  if (msg.tshow === true) {
    metadata.alsoSentToChannel = true
  }
  if (msg.pinned === true) {
    metadata.pinned = true
    const pinnedAt = optionalTime('pinnedAt', msg.pinnedAt)
    if (pinnedAt !== undefined) {
      metadata.pinnedAt = new Date(pinnedAt).toISOString()
    }
    const pinnedBy = userRef('pinnedBy', msg.pinnedBy, false)
    if (pinnedBy !== undefined) {
      metadata.pinnedBy = pinnedBy.id
    }
  }
  const own = optionalText('msg', msg.msg)
  const caption = removed ? undefined : uploadCaption(msg)
  // An upload with both a message and a description (`rooms.upload` takes both): the text is the
  // message, and the caption is kept beside it rather than lost.
  if (own && caption !== undefined && caption !== own) {
    metadata.caption = caption
  }
  const message: { -readonly [K in keyof LegacyMessage]: LegacyMessage[K] } = {
    id,
    senderId: sender.id,
    ...receiver,
    type: attachments !== undefined ? typeOfFiles(attachments) : 'text',
    text: [own || caption || '', blocks?.text ?? '', cards?.text ?? '', location?.text ?? ''].filter((t) => t !== '').join('\n\n'),
    sentAt,
  }
  if (attachments !== undefined) {
    message.attachments = attachments
  }
  if (Object.keys(metadata).length > 0) {
    message.metadata = metadata
  }
  if (removed) {
    message.deletedAt = editedAt ?? updatedAt ?? sentAt
  } else if (hidden) {
    message.deletedAt = updatedAt ?? sentAt
  }
  if (editedAt !== undefined && !removed) {
    message.editedAt = editedAt
  }
  const tmid = optionalId('tmid', msg.tmid)
  if (tmid !== undefined) {
    message.threadParentId = tmid
  }
  if (reactions !== undefined) {
    message.reactions = reactions
  }
  if (mentions.ids !== undefined) {
    message.mentions = mentions.ids
    message.mentionHandles = mentions.handles
  }
  if (t !== undefined && !removed) {
    message.systemKind = t
  }
  if (updatedAt !== undefined) {
    message.updatedAt = updatedAt
  }
  return message
}
