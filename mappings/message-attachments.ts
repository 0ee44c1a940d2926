/**
 * Attachments of `mapMessage` and the `brokenAttachments` policy: an attachment without a usable URL
 * is dropped (the message keeps its text) or rejects the message. Name, extension and MIME type are
 * derived from the URL when the source lacks them; the message type is inferred from them.
 */
import type { LegacyAttachment } from '../src/model/index.ts'
import { type Attachment, LIMITS } from '../src/target/schemas.ts'
import { compact, Rejection } from './common.ts'
import type { MessageScope } from './message-scope.ts'

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
function extensionOf(name: string): string | undefined {
  const base = name.split(/[?#]/)[0]?.split('/').pop() ?? ''
  const dot = base.lastIndexOf('.')
  if (dot <= 0 || dot === base.length - 1) {
    return undefined
  }
  const ext = base.slice(dot + 1).toLowerCase()
  return /^[a-z0-9]{1,10}$/.test(ext) ? ext : undefined
}

function fileNameOf(url: string): string | undefined {
  const base = url.split(/[?#]/)[0]?.split('/').pop()
  if (base === undefined || base === '') {
    return undefined
  }
  try {
    return decodeURIComponent(base)
  } catch {
    return base
  }
}

function attachmentOf(a: LegacyAttachment): Attachment {
  const name = a.name !== undefined && a.name !== null && a.name.trim() !== '' ? a.name : (fileNameOf(a.url) ?? 'file')
  const extension = (a.extension ?? '').replace(/^\./, '').toLowerCase() || extensionOf(name) || extensionOf(a.url) || 'bin'
  const mimeType =
    a.mimeType !== undefined && a.mimeType !== null && a.mimeType !== '' ? a.mimeType : (MIME_BY_EXTENSION[extension] ?? 'application/octet-stream')
  const size = typeof a.size === 'number' && Number.isInteger(a.size) && a.size >= 0 ? String(a.size) : undefined
  return compact({ url: a.url, name, mimeType, extension, size })
}

/** `image`, `audio` or `video` when every attachment is one; `file` otherwise. */
export function mediaTypeOf(attachments: readonly Attachment[]): string {
  const kinds = new Set(attachments.map((a) => a.mimeType.split('/')[0]))
  const [only] = kinds
  return kinds.size === 1 && (only === 'image' || only === 'audio' || only === 'video') ? only : 'file'
}

/** The media types a legacy message may name for itself; otherwise {@link mediaTypeOf} infers one. */
export const MEDIA_TYPES = new Set(['image', 'audio', 'video', 'file'])

/** The message's attachments that have a usable URL, under `brokenAttachments`. */
export function usableAttachments({ record, ctx, out }: MessageScope): Attachment[] {
  const attachments: Attachment[] = []
  const legacyAttachments = record.attachments ?? []
  for (let i = 0; i < legacyAttachments.length; i++) {
    const a = legacyAttachments[i] as LegacyAttachment
    const url: unknown = a?.url
    if (typeof url !== 'string' || url.trim() === '' || url.length > LIMITS.URL_MAX) {
      if (ctx.policies.brokenAttachments === 'reject') {
        throw new Rejection(`attachments.${i}.url`, 'attachment has no usable URL', 'brokenAttachments')
      }
      out.add('brokenAttachments', 'dropped')
      continue
    }
    attachments.push(attachmentOf(a))
  }
  return attachments
}
