/**
 * Talk chat messages (`oc_comments` rows with `object_type = 'chat'`, `object_id` = room id) →
 * `LegacyMessage`:
 * - one-to-one rooms (type 1): to the other user, read from the room name (the JSON list of both
 *   uids); former one-to-one rooms (type 5, a user deleted: see formerOneToOne); note-to-self (6, `rooms.noteToSelf: self`): to oneself;
 *   other rooms: to the group (room id);
 * - verb `comment` (and any other plain verb): text; `system`: JSON `{message, parameters}` →
 *   `systemKind` (see system-messages.ts); `comment_deleted`: `deletedAt` from its JSON `deleted_on`
 *   (Talk overwrites the text); `object_shared`: a shared file (`file_shared`, `oc_share`) as an
 *   attachment, or a rich object (poll, location, deck card) as a `custom` message;
 * - `parent_id` → `threadParentId` (Talk's reply), `meta_data.last_edited_time` → `editedAt` (Talk 19+);
 * - reactions: the `reaction` comments whose parent is the message (read per page);
 * - `@uid` / `@"uid"` mentions of existing users (resolved in the same snapshot).
 * A sender who is no Nextcloud user (guest, e-mail guest, federated user, bot…) is `<actorType>/<actorId>`.
 */
import type { FileLocator } from '../../../src/model/files.ts'
import type { JsonObject, LegacyAttachment, LegacyMessage, LegacyReaction } from '../../../src/model/records.ts'
import { compact, decodeCount, decodeId, decodeJson, decodeOptionalText, decodeText, FieldProblem } from '../../sql/decode.ts'
import { ROOM_TYPE } from '../sql/queries.ts'
import { actorId, jsonObject, unixSeconds } from './decode-helpers.ts'
import { decodeSystemMessage } from './system-messages.ts'

/** A `reaction` comment as read for its page (raw values, decoded with the message). */
export interface RawReaction {
  readonly emoji: unknown
  readonly actorType: unknown
  readonly actorId: unknown
  readonly at: unknown
}

/** What a page's lookups found: shares by id, the uids mentioned that exist, reactions by message id. */
export interface MessageLookups {
  readonly shares: ReadonlyMap<string, { readonly fileId: string; readonly name: string; readonly source?: FileLocator }>
  readonly users: ReadonlySet<string>
  readonly reactions: ReadonlyMap<string, readonly RawReaction[]>
}

export interface MessageDecodeContext {
  readonly lossy: boolean
  readonly siteUrl?: string | undefined
  readonly lookups: MessageLookups
}

const MENTION = /(?<![\p{L}\p{N}_])@(?:"([^"\n]{1,64})"|([A-Za-z0-9_.@-]{1,64}))/gu

/** The handles a text mentions: `@alice` → alice (written plainly), `@"alice smith"` → alice smith (quoted). */
export function mentionTokens(text: string): { id: string; quoted: boolean }[] {
  const found: { id: string; quoted: boolean }[] = []
  for (const m of text.matchAll(MENTION)) {
    const quoted = m[1] !== undefined
    const id = (m[1] ?? m[2] ?? '').replace(/[.-]+$/, '')
    if (id !== '' && id !== 'all') {
      found.push({ id, quoted })
    }
  }
  return found
}

/** The uids and share ids a page of raw comments needs looked up. */
export function lookupsNeeded(rows: readonly Record<string, unknown>[]): { uids: string[]; shares: string[] } {
  const uids = new Set<string>()
  const shares = new Set<string>()
  for (const row of rows) {
    if (typeof row.message !== 'string') {
      continue
    }
    if (row.verb === 'object_shared' && row.message.includes('file_shared')) {
      try {
        const parameters = (JSON.parse(row.message) as { parameters?: { share?: unknown; metaData?: { caption?: unknown } } }).parameters
        const share = parameters?.share
        if (typeof share === 'string' || typeof share === 'number') {
          shares.add(String(share))
        }
        // The caption typed with the file is the message's text: its mentions are looked up too,
        // whatever else the page holds.
        const caption = parameters?.metaData?.caption
        if (typeof caption === 'string' && caption.includes('@')) {
          for (const t of mentionTokens(caption)) {
            uids.add(t.id)
          }
        }
      } catch {
        // decodeMessage names the broken JSON.
      }
    } else if (row.message.includes('@')) {
      for (const t of mentionTokens(row.message)) {
        uids.add(t.id)
      }
    }
  }
  return { uids: [...uids], shares: [...shares] }
}

/** The receiver of a one-to-one comment: the uid in the room name (`["alice","bob"]`) that is not the sender. */
export function oneToOneReceiver(roomName: unknown, senderId: string): string {
  const pair = decodeJson('talk_rooms.name', roomName, 'array')
  const ids = (pair ?? []).filter((v): v is string => typeof v === 'string' && v !== '')
  if (ids.length !== 2) {
    throw new FieldProblem(
      'talk_rooms.name',
      `one-to-one room name ${JSON.stringify(String(roomName ?? '')).slice(0, 80)} is not a list of two user ids`,
    )
  }
  const [a, b] = ids as [string, string]
  if (senderId === a) {
    return b
  }
  if (senderId === b) {
    return a
  }
  throw new FieldProblem('actor_id', `sender ${senderId} is not one of the two users of the one-to-one room ${JSON.stringify(ids)}`)
}

function reactionsOf(raw: readonly RawReaction[] | undefined): LegacyReaction[] | undefined {
  if (raw === undefined || raw.length === 0) {
    return undefined
  }
  const reactions = raw.map((r) => {
    const at = unixSeconds('reactions.creation_timestamp', r.at)
    const reaction: { -readonly [K in keyof LegacyReaction]: LegacyReaction[K] } = {
      emoji: decodeId('reactions.message', r.emoji),
      userId: actorId(String(r.actorType ?? ''), decodeId('reactions.actor_id', r.actorId)),
    }
    if (at !== undefined) {
      reaction.at = at
    }
    return reaction
  })
  reactions.sort((a, b) => (a.at ?? 0) - (b.at ?? 0) || cmp(a.userId, b.userId) || cmp(a.emoji, b.emoji))
  return reactions
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

/** Talk's actor for comments of a deleted user (Nextcloud's ICommentsManager::DELETED_USER, as type and id). */
const DELETED_USER = 'deleted_users/deleted_users'

/**
 * Sender and receiver in a former one-to-one room (type 5). When a user is deleted, Nextcloud
 * rewrites their comments' actor to `deleted_users` and Talk renames the room from the JSON pair
 * of uids to the deleted user's display name (Manager::removeUserFromAllRooms). The deleted user
 * becomes `deleted_users/<that name>` on both sides of the conversation; the other side is the
 * room's remaining user attendee. A room Talk has not renamed (still the JSON pair) reads as type 1.
 */
function formerOneToOne(row: Record<string, unknown>, senderId: string, lossy: boolean): { senderId: string; receiverId: string } {
  const name = decodeOptionalText('talk_rooms.name', row.room_name, lossy)?.trim() ?? ''
  if (name.startsWith('[')) {
    return { senderId, receiverId: oneToOneReceiver(row.room_name, senderId) }
  }
  const departed = `deleted_users/${name === '' ? 'unknown' : name}`
  if (senderId !== DELETED_USER) {
    return { senderId, receiverId: departed }
  }
  const peer = decodeOptionalText('talk_attendees.actor_id', row.former_peer, lossy)
  if (peer === undefined) {
    throw new FieldProblem(
      'object_id',
      `former one-to-one conversation ${String(row.object_id)} (type 5) has no remaining user to receive the deleted user's message`,
    )
  }
  return { senderId: departed, receiverId: peer }
}

/** The receiver of a comment from its room (and, in a former one-to-one room, who the deleted sender was). */
function receiverOf(
  row: Record<string, unknown>,
  senderId: string,
  lossy: boolean,
): Pick<LegacyMessage, 'receiverType' | 'receiverId'> & { senderId?: string } {
  const roomId = decodeId('object_id', row.object_id, lossy)
  const roomType = decodeCount('talk_rooms.type', row.room_type)
  if (roomType === undefined) {
    throw new FieldProblem('object_id', `unknown conversation ${roomId}: no talk_rooms row has that id`)
  }
  if (roomType === ROOM_TYPE.oneToOne) {
    return { receiverType: 'user', receiverId: oneToOneReceiver(row.room_name, senderId) }
  }
  if (roomType === ROOM_TYPE.oneToOneFormer) {
    const pair = formerOneToOne(row, senderId, lossy)
    return { receiverType: 'user', ...pair }
  }
  if (roomType === ROOM_TYPE.noteToSelf) {
    return { receiverType: 'user', receiverId: senderId }
  }
  if (roomType !== ROOM_TYPE.group && roomType !== ROOM_TYPE.public && roomType !== ROOM_TYPE.changelog) {
    throw new FieldProblem('talk_rooms.type', `conversation ${roomId} has room type ${roomType}, which this connector does not know`)
  }
  return { receiverType: 'group', receiverId: roomId }
}

type Body = Pick<LegacyMessage, 'type' | 'text' | 'attachments' | 'customData' | 'systemKind' | 'deletedAt'> & { metadata: JsonObject }

/** Text, kind and attachments by verb. */
function bodyOf(row: Record<string, unknown>, senderId: string, ctx: MessageDecodeContext): Body {
  const { lossy } = ctx
  const verb = decodeOptionalText('verb', row.verb, lossy) ?? 'comment'
  switch (verb) {
    case 'system': {
      const s = decodeSystemMessage(row.message, senderId, lossy)
      const metadata: JsonObject = { parameters: s.parameters }
      if (s.hidden) {
        metadata.hidden = true
      }
      return { type: 'text', text: s.text, systemKind: s.kind, metadata }
    }
    case 'comment_deleted': {
      const json = jsonObject('message', row.message, lossy)
      const deletedAt = unixSeconds('message.deleted_on', json?.deleted_on)
      if (deletedAt === undefined) {
        throw new FieldProblem('message', 'deleted comment without a "deleted_on" time')
      }
      const by = json?.deleted_by_id
      return {
        type: 'text',
        text: '',
        deletedAt,
        metadata: compact({ deletedBy: typeof by === 'string' ? actorId(String(json?.deleted_by_type ?? ''), by) : undefined }),
      }
    }
    case 'object_shared': {
      const json = jsonObject('message', row.message, lossy)
      const p = json?.parameters
      const parameters = typeof p === 'object' && p !== null && !Array.isArray(p) ? (p as JsonObject) : {}
      if (json?.message === 'file_shared') {
        return fileShare(parameters, ctx)
      }
      return { type: 'custom', customData: { kind: String(json?.message ?? 'object_shared'), ...parameters }, metadata: {} }
    }
    default: {
      const metadata: JsonObject = verb === 'comment' ? {} : { verb }
      return { type: 'text', text: decodeText('message', row.message, lossy) ?? '', metadata }
    }
  }
}

/** A `file_shared` message: the shared file by its `oc_share` row, as `<siteUrl>/f/<fileid>`. */
function fileShare(parameters: JsonObject, ctx: MessageDecodeContext): Body {
  const shareId = String(parameters.share ?? '')
  const share = ctx.lookups.shares.get(shareId)
  const meta = parameters.metaData
  const metaData = typeof meta === 'object' && meta !== null ? (meta as JsonObject) : {}
  if (share === undefined || !ctx.siteUrl) {
    return { type: 'text', text: '{file}', metadata: compact({ share: shareId, fileMissing: share === undefined ? true : undefined, metaData }) }
  }
  const name = share.name.split('/').pop() || share.name
  const mimeType = typeof metaData.mimeType === 'string' ? metaData.mimeType : undefined
  const attachment = compact<LegacyAttachment>({
    url: `${ctx.siteUrl}/f/${encodeURIComponent(share.fileId)}`,
    name,
    mimeType,
    extension: /\.([A-Za-z0-9]{1,10})$/.exec(name)?.[1]?.toLowerCase(),
    source: share.source,
  })
  const kind = /^(image|audio|video)\//.exec(mimeType ?? '')?.[1] as 'image' | 'audio' | 'video' | undefined
  // The caption typed with the file (Talk 17.1+, `metaData.caption`) is the message's text.
  const caption = typeof metaData.caption === 'string' && metaData.caption.trim() !== '' ? metaData.caption : undefined
  return {
    type: kind ?? 'file',
    attachments: [attachment],
    ...(caption !== undefined ? { text: caption } : {}),
    metadata: compact({ share: shareId, messageType: metaData.messageType }),
  }
}

export function decodeMessage(row: Record<string, unknown>, ctx: MessageDecodeContext): LegacyMessage {
  const { lossy } = ctx
  const id = decodeId('id', row.id, lossy)
  const actor = actorId(decodeId('actor_type', row.actor_type, lossy), decodeId('actor_id', row.actor_id, lossy))
  const receiver = receiverOf(row, actor, lossy)
  const senderId = receiver.senderId ?? actor
  const sentAt = unixSeconds('creation_timestamp', row.created)
  if (sentAt === undefined) {
    throw new FieldProblem('creation_timestamp', 'is null')
  }
  const body = bodyOf(row, senderId, ctx)
  const meta = row.meta_data === null || row.meta_data === undefined ? undefined : jsonObject('meta_data', row.meta_data, lossy)
  const editedAt = meta === undefined ? undefined : unixSeconds('meta_data.last_edited_time', meta.last_edited_time)
  const metadata = body.metadata
  const parent = row.parent_id === null || row.parent_id === undefined ? undefined : decodeId('parent_id', row.parent_id)
  if (parent !== undefined && body.systemKind !== undefined) {
    metadata.parentId = parent
  }
  if (meta?.thread_id !== undefined) {
    metadata.threadId = String(meta.thread_id)
  }
  if (meta?.silent === true) {
    metadata.silent = true
  }
  if (row.reference_id !== null && row.reference_id !== undefined) {
    const referenceId = decodeOptionalText('reference_id', row.reference_id, lossy)
    if (referenceId !== undefined) {
      metadata.referenceId = referenceId
    }
  }
  // Built field by field rather than through `compact`: this runs once per comment.
  const message: { -readonly [K in keyof LegacyMessage]: LegacyMessage[K] } = {
    id,
    senderId,
    receiverType: receiver.receiverType,
    receiverId: receiver.receiverId,
    type: body.type,
    sentAt,
  }
  if (body.type !== 'custom') {
    message.text = body.text ?? ''
  }
  if (body.attachments !== undefined) {
    message.attachments = body.attachments
  }
  if (body.customData !== undefined) {
    message.customData = body.customData
  }
  for (const _ in metadata) {
    message.metadata = metadata
    break
  }
  if (editedAt !== undefined) {
    message.editedAt = editedAt
  }
  if (body.deletedAt !== undefined) {
    message.deletedAt = body.deletedAt
  }
  if (parent !== undefined && body.systemKind === undefined) {
    message.threadParentId = parent
  }
  const reactions = reactionsOf(ctx.lookups.reactions.get(id))
  if (reactions !== undefined) {
    message.reactions = reactions
  }
  const text = message.text
  if (body.systemKind === undefined && text !== undefined && text.includes('@')) {
    const tokens = mentionTokens(text).filter((t) => ctx.lookups.users.has(t.id))
    if (tokens.length > 0) {
      message.mentions = [...new Set(tokens.map((t) => t.id))]
      const handles = Object.fromEntries(tokens.filter((t) => !t.quoted).map((t) => [t.id.toLowerCase(), t.id]))
      if (Object.keys(handles).length > 0) {
        message.mentionHandles = handles
      }
    }
  }
  if (body.systemKind !== undefined) {
    message.systemKind = body.systemKind
  }
  message.updatedAt = Math.max(sentAt, editedAt ?? 0, body.deletedAt ?? 0)
  return message
}
