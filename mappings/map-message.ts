/**
 * Legacy message → one or more `MessageImport` items.
 *
 * Policies, in the order they are applied (the first that skips a message is the one counted):
 * retention → deletes → systemMessages → threads (skip) → brokenAttachments → emptyMessages →
 * missingUsers / dependencies → threads (flatten, quote) → edits → mentions → reactions →
 * fieldLimits (metadata) → longText → userModule.
 */
import type { JsonObject, LegacyAttachment, LegacyMessage } from '../src/model/index.ts'
import { LIMITS, jsonBytes, jsonSizeBound, type Attachment, type MessageData, type UserDetails } from '../src/target/schemas.ts'
import { messageMuid, partMuid, stableHash, toPlatformId } from './ids.ts'
import { DEFAULT_QUOTE_WORDS } from './policies.ts'
import { cleanRecord } from './clean-record.ts'
import {
  Outcomes,
  Rejection,
  Skip,
  compact,
  cutText,
  fieldProblem,
  finish,
  guard,
  optionalSeconds,
  requiredSeconds,
  validated,
} from './common.ts'
import { jsonTextBytes, mentionedUids, quoteOf, rewriteMentions, splitText, truncateText } from './text.ts'
import { isSkippedRef, type MapResult, type MappedItem, type MappingContext, type PlannedUser } from './types.ts'

const DAY_MS = 86_400_000
/** The legacy id under which the configured system user's uid is claimed in the id registry. */
export const SYSTEM_USER_LEGACY_ID = '@chatferry/system-user'
/** Reserved in each part's metadata for the part marker (`{"part":{"n":…,"of":…,"first":"<muid>"}}`). */
const PART_RESERVE_BYTES = 160
/** Below this many bytes of room for text, a message is not split: its other data is too large. */
const MIN_PART_BYTES = 512

const MIME_BY_EXTENSION: Record<string, string> = {
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  png: 'image/png',
  gif: 'image/gif',
  webp: 'image/webp',
  svg: 'image/svg+xml',
  heic: 'image/heic',
  mp3: 'audio/mpeg',
  m4a: 'audio/mp4',
  ogg: 'audio/ogg',
  wav: 'audio/wav',
  mp4: 'video/mp4',
  mov: 'video/quicktime',
  webm: 'video/webm',
  pdf: 'application/pdf',
  txt: 'text/plain',
  csv: 'text/csv',
  json: 'application/json',
  zip: 'application/zip',
  doc: 'application/msword',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xls: 'application/vnd.ms-excel',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  ppt: 'application/vnd.ms-powerpoint',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
}
const MEDIA_TYPES = new Set(['image', 'audio', 'video', 'file'])

function extensionOf(name: string): string | undefined {
  const base = name.split(/[?#]/)[0]?.split('/').pop() ?? ''
  const dot = base.lastIndexOf('.')
  if (dot <= 0 || dot === base.length - 1) return undefined
  const ext = base.slice(dot + 1).toLowerCase()
  return /^[a-z0-9]{1,10}$/.test(ext) ? ext : undefined
}

function fileNameOf(url: string): string | undefined {
  const base = url.split(/[?#]/)[0]?.split('/').pop()
  if (base === undefined || base === '') return undefined
  try {
    return decodeURIComponent(base)
  } catch {
    return base
  }
}

function attachmentOf(a: LegacyAttachment): Attachment {
  const name = a.name !== undefined && a.name !== null && a.name.trim() !== '' ? a.name : (fileNameOf(a.url) ?? 'file')
  const extension = (a.extension ?? '').replace(/^\./, '').toLowerCase() || extensionOf(name) || extensionOf(a.url) || 'bin'
  const mimeType = a.mimeType !== undefined && a.mimeType !== null && a.mimeType !== '' ? a.mimeType : (MIME_BY_EXTENSION[extension] ?? 'application/octet-stream')
  const size = typeof a.size === 'number' && Number.isInteger(a.size) && a.size >= 0 ? String(a.size) : undefined
  return compact({ url: a.url, name, mimeType, extension, size })
}

function mediaTypeOf(attachments: readonly Attachment[]): string {
  const kinds = new Set(attachments.map((a) => a.mimeType.split('/')[0]))
  const [only] = kinds
  return kinds.size === 1 && (only === 'image' || only === 'audio' || only === 'video') ? only : 'file'
}

export function mapMessage(record: LegacyMessage, ctx: MappingContext): MapResult<'messages'> {
  const out = new Outcomes()
  return guard(out, () => {
    record = cleanRecord('messages', record, ctx, out)
    const p = ctx.policies
    const key = p.legacyMetadata.key
    if (typeof record.id !== 'string' || record.id === '') throw new Rejection('id', 'message id is missing')
    const muid = messageMuid(record.id)
    const sentAt = requiredSeconds(record.sentAt, 'sentAt')

    // ── policies that skip the whole message ──
    if (record.sentAt < ctx.now - p.retention.retentionDays * DAY_MS) {
      if (p.retention.oldMessages === 'skip') {
        throw new Skip('retention', 'skipped', `older than ${p.retention.retentionDays} days (retention.oldMessages: skip)`)
      }
      out.add('retention', 'sent-extended')
    }
    const deleted = record.deletedAt !== undefined && record.deletedAt !== null
    if (deleted && p.deletes.mode === 'skip') throw new Skip('deletes', 'skipped', 'deleted message (deletes.mode: skip)')
    const system = record.systemKind !== undefined && record.systemKind !== null && record.systemKind !== ''
    if (system && p.systemMessages.mode === 'skip') {
      throw new Skip('systemMessages', 'skipped', `system message ${record.systemKind} (systemMessages.mode: skip)`)
    }
    const reply = record.threadParentId !== undefined && record.threadParentId !== null && record.threadParentId !== ''
    if (reply && p.threads.replies === 'skip') throw new Skip('threads', 'skipped', 'thread reply (threads.replies: skip)')

    const own: JsonObject = {}
    if (p.legacyMetadata.ids) own.id = record.id

    // ── content ──
    let text = record.text ?? ''
    let attachments: Attachment[] = []
    let customData: JsonObject | undefined
    let type: string
    let category: 'message' | 'custom' = 'message'
    if (deleted) {
      text = p.deletes.tombstoneText
      type = 'text'
      const at = optionalSeconds(record.deletedAt, 'deletedAt', ctx, out)
      own.deletedAt = at ?? true
      out.add('deletes', 'tombstoned')
    } else {
      const legacyAttachments = record.attachments ?? []
      for (let i = 0; i < legacyAttachments.length; i++) {
        const a = legacyAttachments[i] as LegacyAttachment
        const url: unknown = a?.url
        if (typeof url !== 'string' || url.trim() === '' || url.length > LIMITS.URL_MAX) {
          if (p.brokenAttachments === 'reject') {
            throw new Rejection(`attachments.${i}.url`, 'attachment has no usable URL', 'brokenAttachments')
          }
          out.add('brokenAttachments', 'dropped')
          continue
        }
        attachments.push(attachmentOf(a))
      }
      if (record.type === 'custom') {
        if (record.customData === undefined || record.customData === null) throw new Rejection('customData', 'a custom message without customData')
        category = 'custom'
        type = 'custom'
        customData = record.customData
      } else if (attachments.length > 0) {
        type = MEDIA_TYPES.has(record.type) ? record.type : mediaTypeOf(attachments)
      } else {
        type = 'text'
      }
      if (system) {
        if (text.trim() === '') text = `[${record.systemKind}]`
        attachments = []
        type = 'text'
      }
      if (category === 'message' && type === 'text' && text.trim() === '') {
        if (p.emptyMessages === 'reject') throw new Rejection('text', 'empty text and no attachments', 'emptyMessages')
        throw new Skip('emptyMessages', 'skipped', 'empty text and no attachments')
      }
    }

    // ── sender and receiver ──
    const extraItems: MappedItem<'users'>[] = []
    let sender: string
    if (system) {
      const su = p.systemMessages.systemUser
      sender = ctx.ids.claim('user', SYSTEM_USER_LEGACY_ID, su.uid)
      extraItems.push({
        entity: 'users',
        targetKey: sender,
        payload: validated('users', { uid: sender, name: su.name, metadata: { [key]: { systemUser: true } } }),
        reason: 'system-user',
      })
      own.systemKind = record.systemKind
      if (record.senderId) own.sender = record.senderId
      out.add('systemMessages', 'sent-as-user')
    } else {
      sender = participant(record.senderId, 'senderId', 'sender', ctx, out, extraItems)
    }
    let receiver: string
    if (record.receiverType === 'group') {
      if (!record.receiverId) throw new Rejection('receiverId', 'receiver is missing')
      const g = ctx.group(record.receiverId)
      if (g === undefined) throw new Rejection('receiverId', `unknown group ${JSON.stringify(record.receiverId)}`)
      if (isSkippedRef(g)) throw new Skip('dependencies', `group-skipped-by-${g.policy}`, `its group was skipped (${g.policy})`)
      receiver = g.guid
    } else if (record.receiverType === 'user') {
      receiver = participant(record.receiverId, 'receiverId', 'receiver', ctx, out, extraItems)
    } else {
      throw new Rejection('receiverType', `unknown receiver type ${JSON.stringify(record.receiverType)}`)
    }

    // ── threads ──
    if (reply) {
      const parentId = record.threadParentId as string
      const parent = ctx.message(parentId)
      const known = parent !== undefined && !isSkippedRef(parent)
      own.parent = { id: parentId, muid: known ? parent.muid : messageMuid(parentId) }
      out.add('threads', 'flattened')
      if (!known) out.add('threads', 'parent-unknown')
      const words = p.threads.quoteParent === true ? DEFAULT_QUOTE_WORDS : p.threads.quoteParent
      if (words !== false && known && parent.text !== undefined && parent.text.trim() !== '' && !deleted) {
        text = quoteOf(parent.text, words, parent.senderName) + text
        out.add('threads', 'quoted')
      }
    }

    // ── edits ──
    if (record.editedAt !== undefined && record.editedAt !== null && !deleted) {
      if (p.edits.editedAt === 'metadata') {
        const at = optionalSeconds(record.editedAt, 'editedAt', ctx, out)
        if (at !== undefined) own.editedAt = at
        out.add('edits', 'editedAt-in-metadata')
      } else {
        out.add('edits', 'editedAt-dropped')
      }
    }

    // ── mentions ──
    let details: Map<string, UserDetails> | undefined
    const handles = record.mentionHandles ? Object.entries(record.mentionHandles) : []
    if (!deleted && ((record.mentions?.length ?? 0) > 0 || handles.length > 0)) {
      if (p.mentions === 'rewrite') {
        const byLegacyId = new Map<string, string>()
        const byHandle = new Map<string, string>()
        let unresolved = false
        for (const legacyId of new Set([...(record.mentions ?? []), ...handles.map(([, id]) => id)])) {
          const u = ctx.user(legacyId)
          if (u === undefined || isSkippedRef(u)) {
            unresolved = true
            continue
          }
          byLegacyId.set(legacyId, u.uid)
          if (u.username !== undefined) byHandle.set(u.username, u.uid)
          ;(details ??= new Map()).set(u.uid, userDetails(u))
        }
        for (const [handle, legacyId] of handles) {
          const uid = byLegacyId.get(legacyId)
          if (uid !== undefined) byHandle.set(handle, uid)
        }
        const rewritten = rewriteMentions(text, byLegacyId, byHandle)
        if (rewritten !== text) out.add('mentions', 'rewritten')
        if (unresolved) out.add('mentions', 'unresolved')
        text = rewritten
      } else {
        out.add('mentions', 'kept')
      }
    }

    // ── reactions ──
    if (!deleted && (record.reactions?.length ?? 0) > 0) {
      if (p.reactions === 'drop') {
        out.add('reactions', 'dropped')
      } else {
        const byEmoji: Record<string, string[]> = {}
        let unknown = false
        for (const r of record.reactions ?? []) {
          const u = r.userId ? ctx.user(r.userId) : undefined
          if (u === undefined || isSkippedRef(u) || typeof r.emoji !== 'string' || r.emoji === '') {
            unknown = true
            continue
          }
          const list = (byEmoji[r.emoji] ??= [])
          if (!list.includes(u.uid)) list.push(u.uid)
        }
        if (Object.keys(byEmoji).length > 0) {
          own.reactions = byEmoji
          out.add('reactions', 'in-metadata')
        }
        if (unknown) out.add('reactions', 'reactor-unknown')
      }
    }

    // ── data, within 10 KB ──
    let legacyMeta: JsonObject | undefined = record.metadata ?? undefined
    // `own` itself goes into the metadata: it is only changed (in the size checks below) before
    // the metadata that is finally sent is built again.
    const metadataOf = (extra?: JsonObject): JsonObject | undefined => {
      const mine = extra === undefined ? own : { ...own, ...extra }
      const m: JsonObject = legacyMeta === undefined ? {} : { ...legacyMeta }
      let any = legacyMeta !== undefined && Object.keys(legacyMeta).length > 0
      for (const _ in mine) {
        m[key] = mine
        any = true
        break
      }
      return any ? m : undefined
    }
    const dataOf = (t: string, atts: Attachment[], extra?: JsonObject): MessageData => {
      const data: MessageData = {}
      if (t !== '') data.text = t
      if (atts.length > 0) data.attachments = atts
      if (customData !== undefined) data.customData = customData
      const metadata = metadataOf(extra)
      if (metadata !== undefined) data.metadata = metadata
      return data
    }
    const skeletonBytes = (extra?: JsonObject): number => jsonBytes({ ...dataOf('', attachments, extra), text: '' })
    const deliveredAt = optionalSeconds(record.deliveredAt, 'deliveredAt', ctx, out)
    const readAt = optionalSeconds(record.readAt, 'readAt', ctx, out)
    const sortBase = `${String(Math.floor(record.sentAt)).padStart(15, '0')}:${muid}:`
    /** Part `n` (from 1) of the message, with text `t` and its `data`. */
    const messageItem = (t: string, data: MessageData, n: number): MappedItem<'messages'> => {
      // Built in one literal (no `compact`, no spread): this runs at least once per message.
      const payload: Record<string, unknown> = {
        muid: n === 1 ? muid : partMuid(muid, n),
        sender,
        receiverType: record.receiverType,
        receiver,
        category: n === 1 ? category : 'message',
        type: n === 1 ? type : 'text',
        sentAt,
        data,
      }
      if (deliveredAt !== undefined) payload.deliveredAt = deliveredAt
      if (readAt !== undefined) payload.readAt = readAt
      if (details !== undefined) {
        let mentioned: Record<string, UserDetails> | undefined
        for (const uid of mentionedUids(t)) {
          const d = details.get(uid)
          if (d !== undefined) (mentioned ??= {})[uid] = d
        }
        if (mentioned !== undefined) payload.mentionedUserDetails = mentioned
      }
      return finish('messages', payload, record, ctx, out, sortBase + String(n).padStart(4, '0'))
    }

    // Most messages are far below the limit, which a bound of the whole data's JSON size shows
    // without serialising it (the margin covers the `"text":""` the skeleton counts).
    const whole = dataOf(text, attachments)
    if (jsonSizeBound(whole, LIMITS.MESSAGE_DATA_BYTES_MAX) + 16 <= LIMITS.MESSAGE_DATA_BYTES_MAX) {
      return { kind: 'items', items: [messageItem(text, whole, 1)], extraItems, outcomes: out.list }
    }
    const textBytes = jsonTextBytes(text)
    const minText = Math.min(textBytes, MIN_PART_BYTES)
    let skeleton = skeletonBytes()
    if (skeleton + minText > LIMITS.MESSAGE_DATA_BYTES_MAX) {
      if (legacyMeta !== undefined) {
        fieldProblem(ctx, out, 'metadata', `data is over ${LIMITS.MESSAGE_DATA_BYTES_MAX} bytes`, 'metadata-dropped')
        legacyMeta = undefined
      }
      if (skeletonBytes() + minText > LIMITS.MESSAGE_DATA_BYTES_MAX && own.reactions !== undefined) {
        fieldProblem(ctx, out, 'reactions', `data is over ${LIMITS.MESSAGE_DATA_BYTES_MAX} bytes`, 'reactions-dropped')
        delete own.reactions
      }
      if (skeletonBytes() + minText > LIMITS.MESSAGE_DATA_BYTES_MAX) {
        throw new Rejection('data', `data is over ${LIMITS.MESSAGE_DATA_BYTES_MAX} bytes without its text`)
      }
      skeleton = skeletonBytes()
    }

    let texts: string[] = [text]
    if (text !== '' && skeleton + textBytes > LIMITS.MESSAGE_DATA_BYTES_MAX) {
      if (p.longText.mode === 'truncate') {
        const budget = LIMITS.MESSAGE_DATA_BYTES_MAX - skeletonBytes({ truncated: true })
        texts = [truncateText(text, budget, p.longText.truncationMarker)]
        out.add('longText', 'truncated')
      } else {
        const budget = LIMITS.MESSAGE_DATA_BYTES_MAX - skeletonBytes() - PART_RESERVE_BYTES
        const parts = splitText(text, budget, p.longText.maxParts)
        if (parts === undefined) {
          throw new Rejection('text', `text needs more than longText.maxParts (${p.longText.maxParts}) parts`, 'longText')
        }
        texts = parts
        out.add('longText', 'split')
      }
    }

    const items = texts.map((t, i) => {
      const partInfo = texts.length > 1 ? { part: { n: i + 1, of: texts.length, first: muid } } : texts[0] !== text ? { truncated: true } : undefined
      // Parts after the first carry only text: the first part holds the attachments.
      return messageItem(t, dataOf(t, i === 0 ? attachments : [], partInfo), i + 1)
    })
    return { kind: 'items', items, extraItems, outcomes: out.list }
  })
}

function userDetails(u: PlannedUser): UserDetails {
  return compact({ uid: u.uid, name: u.name, avatar: u.avatar })
}

/** Resolves a sender or one-to-one receiver, creating a placeholder when the policy allows. */
function participant(
  legacyId: string,
  field: 'senderId' | 'receiverId',
  role: 'sender' | 'receiver',
  ctx: MappingContext,
  out: Outcomes,
  extraItems: MappedItem<'users'>[],
): string {
  if (typeof legacyId !== 'string' || legacyId === '') throw new Rejection(field, `${role} is missing`)
  const u = ctx.user(legacyId)
  if (isSkippedRef(u)) throw new Skip('dependencies', `${role}-skipped-by-${u.policy}`, `its ${role} was skipped (${u.policy})`)
  if (u !== undefined) return u.uid
  const mp = ctx.policies.missingUsers
  if (mp.mode === 'reject') throw new Rejection(field, `unknown user ${JSON.stringify(legacyId)}`, 'missingUsers')
  const uid = ctx.ids.claim('user', legacyId, placeholderUid(legacyId, mp.uidPrefix))
  const name = cutText(mp.name.replaceAll('{id}', legacyId.isWellFormed() ? legacyId : toPlatformId(legacyId)), LIMITS.NAME_MAX)
  extraItems.push({
    entity: 'users',
    targetKey: uid,
    payload: validated(
      'users',
      compact({
        uid,
        name,
        tags: mp.tag !== '' ? [mp.tag] : undefined,
        metadata: { [ctx.policies.legacyMetadata.key]: { id: legacyId, placeholder: true } },
      }),
    ),
    reason: 'placeholder',
  })
  out.add('missingUsers', `${role}-placeholder`)
  return uid
}

/** The deterministic uid of the placeholder for an unknown legacy user: `<prefix><hash>`. */
export function placeholderUid(legacyId: string, prefix = 'placeholder-'): string {
  return `${prefix}${stableHash(legacyId)}`
}
