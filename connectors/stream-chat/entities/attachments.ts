/**
 * Stream Chat message attachments → LegacyAttachment. An uploaded file carries `asset_url` (files,
 * audio, video) or `image_url` (images) on Stream's CDN; those URLs are signed and expire, so each
 * gets a locator for the files lane (`reader: 'http'`), which copies the bytes while the link still
 * works. Link previews (URL enrichment: `og_scrape_url`), giphy and other attachments without a
 * file are no files: they stay in the message's metadata.
 */
import type { JsonObject, LegacyAttachment, LegacyMessageType } from '../../../src/model/records.ts'
import { FieldProblem, isObject, str } from './fields.ts'

export interface MessageFiles {
  readonly attachments: readonly LegacyAttachment[]
  /** The attachments that are not files (link previews, giphy, custom), as Stream wrote them. */
  readonly other: readonly JsonObject[]
  /** The message type the first file gives (`image`, `video`, `audio`, `file`), else undefined. */
  readonly type: LegacyMessageType | undefined
}

const FILE_TYPES: Record<string, LegacyMessageType> = { image: 'image', video: 'video', audio: 'audio', file: 'file', voiceRecording: 'audio' }

function fileUrl(field: string, a: JsonObject): string | undefined {
  if (str(a.og_scrape_url) !== undefined || a.type === 'giphy') {
    return undefined
  }
  const url = str(a.asset_url) ?? (a.type === 'image' ? str(a.image_url) : undefined)
  if (url === undefined) {
    return undefined
  }
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw new FieldProblem(field, `${field} is not a URL: ${JSON.stringify(url).slice(0, 60)}`)
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
    throw new FieldProblem(field, `${field} is not an http(s) URL`)
  }
  return url
}

/** The last path segment of a URL, decoded, as a file name. */
function nameFromUrl(url: string): string {
  const last = new URL(url).pathname.split('/').filter(Boolean).at(-1) ?? 'file'
  try {
    return decodeURIComponent(last)
  } catch {
    return last
  }
}

/** A message without attachments (most of them): one shared, frozen answer. */
const NONE: MessageFiles = Object.freeze({ attachments: Object.freeze([]), other: Object.freeze([]), type: undefined })

export function decodeAttachments(v: unknown): MessageFiles {
  if (v === undefined || v === null || (Array.isArray(v) && v.length === 0)) {
    return NONE
  }
  if (!Array.isArray(v)) {
    throw new FieldProblem('attachments', 'attachments is not an array')
  }
  const attachments: LegacyAttachment[] = []
  const other: JsonObject[] = []
  let type: LegacyMessageType | undefined
  v.forEach((a, i) => {
    if (!isObject(a)) {
      throw new FieldProblem(`attachments[${i}]`, `attachments[${i}] is not an object`)
    }
    const field = `attachments[${i}].${str(a.asset_url) !== undefined ? 'asset_url' : 'image_url'}`
    const url = fileUrl(field, a)
    if (url === undefined) {
      other.push(a)
      return
    }
    const size = typeof a.file_size === 'number' && Number.isSafeInteger(a.file_size) && a.file_size >= 0 ? a.file_size : undefined
    const name = str(a.title) ?? str(a.fallback) ?? nameFromUrl(url)
    const dot = name.lastIndexOf('.')
    attachments.push({
      url,
      name,
      ...(str(a.mime_type) !== undefined ? { mimeType: a.mime_type as string } : {}),
      ...(dot > 0 && dot < name.length - 1 ? { extension: name.slice(dot + 1).toLowerCase() } : {}),
      ...(size !== undefined ? { size } : {}),
      source: { reader: 'http', ref: url, host: new URL(url).host },
    })
    type ??= FILE_TYPES[String(a.type)] ?? 'file'
  })
  return { attachments, other, type }
}
