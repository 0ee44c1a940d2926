/**
 * Mattermost posts (live ones: not edit-history copies) → `LegacyMessage`.
 * - direct channel (`D`, name `idA__idB`): one-to-one, receiver = the other user (self-DM: self);
 * - other channels: to the group (channel id);
 * - `system_*` types → `systemKind`; `custom_*` plugin types → `custom` with the props as customData;
 * - `rootid` → threadParentId, `editat` → editedAt, `deleteat` → deletedAt (text kept);
 * - integration content (`props.attachments`: webhooks, Jira, GitLab…) rendered after the text;
 * - reactions (not soft-deleted), files (`fileinfo`, URL = fileBaseUrl + path, in `fileids` order);
 * - `@username` mentions resolved to user ids (same snapshot), `@channel/@all/@here` in metadata.
 */
import type { JsonObject, LegacyAttachment, LegacyMessage, LegacyReaction } from '../../../src/model/records.ts'
import { fileUrl, typeOfAttachments } from '../../sql/attachments.ts'
import {
  compact,
  decodeBoolean,
  decodeCount,
  decodeId,
  decodeJson,
  decodeOptionalId,
  decodeOptionalText,
  decodeStringList,
  decodeText,
  FieldProblem,
} from '../../sql/decode.ts'
import type { ChannelKind } from '../sql/page-lookups.ts'
import { mmRequiredTime, mmTime } from './decode-helpers.ts'
import { integrationText } from './integration-text.ts'
import { parseMentions, resolveMentions } from './mentions.ts'

export interface MessageDecodeContext {
  readonly lossy: boolean
  /** Without a trailing slash. */
  readonly fileBaseUrl: string
  /** The pacing host of this source's files when `source.files` is set (attachments then carry a locator). */
  readonly fileHost?: string
  /** Lowercase username → user id for the usernames mentioned in this page. */
  readonly usernames: ReadonlyMap<string, string>
  /** The channel of each post of this page, by its raw `channelid` (`null`: no such channel). */
  readonly channels: ReadonlyMap<string, ChannelKind | null>
}

export { fileUrl, typeOfAttachments }

/** The receiver of a direct-channel post: the member of `idA__idB` who is not the sender. */
export function directReceiver(channelName: string, senderId: string): string {
  const ids = channelName.split('__')
  if (ids.length !== 2 || ids[0] === '' || ids[1] === '') {
    throw new FieldProblem('channelid', `direct channel name ${JSON.stringify(channelName)} is not <userId>__<userId>`)
  }
  const [a, b] = ids as [string, string]
  if (senderId === a) {
    return b
  }
  if (senderId === b) {
    return a
  }
  throw new FieldProblem('userid', `sender ${senderId} is not a member of direct channel ${channelName}`)
}

function attachmentsOf(row: Record<string, unknown>, ctx: MessageDecodeContext): LegacyAttachment[] | undefined {
  const order = decodeStringList('fileids', row.fileids, ctx.lossy) ?? []
  const files = decodeJson('files', row.files, 'array', ctx.lossy)
  if (files === undefined || files.length === 0) {
    return undefined
  }
  const rank = (id: string) => {
    const i = order.indexOf(id)
    return i === -1 ? order.length : i
  }
  const list = files.map((f) => {
    const [id, name, path, extension, size, mime] = f as unknown[]
    const fileId = decodeId('fileinfo.id', id)
    const filePath = decodeOptionalText('fileinfo.path', path)
    if (filePath === undefined) {
      throw new FieldProblem('fileinfo.path', `file ${fileId} has no path`)
    }
    return {
      fileId,
      attachment: compact<LegacyAttachment>({
        url: fileUrl(ctx.fileBaseUrl, filePath),
        name: decodeOptionalText('fileinfo.name', name) ?? filePath.split('/').pop() ?? fileId,
        mimeType: decodeOptionalText('fileinfo.mimetype', mime),
        extension: decodeOptionalText('fileinfo.extension', extension),
        size: decodeCount('fileinfo.size', size),
        source: ctx.fileHost === undefined ? undefined : { reader: 'mattermost', ref: filePath, host: ctx.fileHost },
      }),
    }
  })
  list.sort((x, y) => rank(x.fileId) - rank(y.fileId) || (x.fileId < y.fileId ? -1 : x.fileId > y.fileId ? 1 : 0))
  return list.map((x) => x.attachment)
}

function reactionsOf(row: Record<string, unknown>, lossy: boolean): LegacyReaction[] | undefined {
  const list = decodeJson('reactions', row.reactions, 'array', lossy)
  if (list === undefined || list.length === 0) {
    return undefined
  }
  const reactions = list.map((r) => {
    const [emoji, userId, at] = r as unknown[]
    return compact<LegacyReaction>({
      emoji: decodeId('reactions.emojiname', emoji),
      userId: decodeId('reactions.userid', userId),
      at: mmTime('reactions.createat', at),
    })
  })
  reactions.sort((a, b) => (a.at ?? 0) - (b.at ?? 0) || cmp(a.userId, b.userId) || cmp(a.emoji, b.emoji))
  return reactions
}

/**
 * The post's text with its `props.attachments` (integration content) rendered after it, and the
 * props with only what was not rendered left in `attachments` (see integration-text.ts).
 */
function withIntegrationText(message: string, props: JsonObject | undefined): { text: string; props: JsonObject | undefined; rendered: number } {
  if (props === undefined || !Array.isArray(props.attachments)) {
    return { text: message, props, rendered: 0 }
  }
  const it = integrationText(props.attachments)
  const { attachments: _rendered, ...rest } = props
  const left = it.leftover === undefined ? rest : { ...rest, attachments: it.leftover }
  const text = it.text === '' ? message : message.trim() === '' ? it.text : `${message}\n\n${it.text}`
  return { text, props: left, rendered: it.rendered }
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

/** The usernames a page of raw posts mentions, to look up before decoding. */
export function mentionCandidates(rows: readonly Record<string, unknown>[]): string[] {
  const all = new Set<string>()
  for (const row of rows) {
    // Integration content (props.attachments) becomes text too: its mentions are looked up as well.
    for (const source of [row.message, typeof row.props === 'object' && row.props !== null ? JSON.stringify(row.props) : row.props]) {
      if (typeof source !== 'string' || !source.includes('@')) {
        continue
      }
      for (const c of parseMentions(source).candidates) {
        all.add(c)
      }
    }
  }
  return [...all]
}

export function decodeMessage(row: Record<string, unknown>, ctx: MessageDecodeContext): LegacyMessage {
  const { lossy } = ctx
  const id = decodeId('id', row.id, lossy)
  const senderId = decodeId('userid', row.userid, lossy)
  const channelId = decodeId('channelid', row.channelid, lossy)
  const channel = ctx.channels.get(String(row.channelid))
  if (channel === undefined || channel === null) {
    throw new FieldProblem('channelid', `unknown channel ${channelId}`)
  }
  const direct = channel.type === 'D'
  const receiverId = direct ? directReceiver(channel.name ?? '', senderId) : channelId
  const message0 = decodeText('message', row.message, lossy) ?? ''
  const postType = decodeOptionalText('type', row.post_type, lossy)
  const rawProps = decodeJson('props', row.props, 'object', lossy)
  const attachments = attachmentsOf(row, ctx)
  const systemKind = postType?.startsWith('system_') ? postType : undefined
  const custom = postType?.startsWith('custom_') === true
  const { text, props, rendered } = custom ? { text: message0, props: rawProps, rendered: 0 } : withIntegrationText(message0, rawProps)
  const hasProps = props !== undefined && Object.keys(props).length > 0
  let mentions: string[] | undefined
  let mentionHandles: Record<string, string> | undefined
  let channelMentions: readonly string[] | undefined
  if (text.includes('@')) {
    const parsed = parseMentions(text)
    const resolved = resolveMentions(parsed, ctx.usernames)
    if (resolved.ids.length > 0) {
      mentions = resolved.ids
      mentionHandles = resolved.handles
    }
    if (parsed.channel.length > 0) {
      channelMentions = parsed.channel
    }
  }
  const hashtags = decodeOptionalText('hashtags', row.hashtags, lossy)
  // Built field by field rather than through `compact`: this runs once per post.
  const metadata: JsonObject = {}
  if (hasProps && !custom) {
    metadata.props = props
  }
  if (postType !== undefined && systemKind === undefined && !custom) {
    metadata.postType = postType
  }
  if (rendered > 0) {
    metadata.attachmentsAsText = rendered
  }
  if (hashtags) {
    metadata.hashtags = hashtags.split(/\s+/)
  }
  if (decodeBoolean('ispinned', row.ispinned)) {
    metadata.pinned = true
  }
  if (channelMentions !== undefined) {
    metadata.channelMentions = channelMentions
  }
  const message: { -readonly [K in keyof LegacyMessage]: LegacyMessage[K] } = {
    id,
    senderId,
    receiverType: direct ? 'user' : 'group',
    receiverId,
    type: custom ? 'custom' : attachments ? typeOfAttachments(attachments) : 'text',
    text,
    sentAt: mmRequiredTime('createat', row.createat),
  }
  if (attachments !== undefined) {
    message.attachments = attachments
  }
  if (custom) {
    message.customData = { postType, ...(props ?? {}) }
  }
  for (const _ in metadata) {
    message.metadata = metadata
    break
  }
  const editedAt = mmTime('editat', row.editat)
  if (editedAt !== undefined) {
    message.editedAt = editedAt
  }
  const deletedAt = mmTime('deleteat', row.deleteat)
  if (deletedAt !== undefined) {
    message.deletedAt = deletedAt
  }
  const threadParentId = decodeOptionalId('rootid', row.rootid, lossy)
  if (threadParentId !== undefined) {
    message.threadParentId = threadParentId
  }
  const reactions = reactionsOf(row, lossy)
  if (reactions !== undefined) {
    message.reactions = reactions
  }
  if (mentions !== undefined) {
    message.mentions = mentions
  }
  if (mentionHandles !== undefined) {
    message.mentionHandles = mentionHandles
  }
  if (systemKind !== undefined) {
    message.systemKind = systemKind
  }
  const updatedAt = mmTime('updateat', row.updateat)
  if (updatedAt !== undefined) {
    message.updatedAt = updatedAt
  }
  return message
}
