/**
 * How a message goes with its files (issue 27): at claim time, just before its batch is sent, the
 * attachments of a message item whose files the lane settled are rewritten from its files — a
 * copied file's attachment points at the store's public URL with the bytes' size and sniffed
 * type; a failed one follows the policy the lane recorded on it (`link-original`: the legacy URL
 * stays; `note`: the attachment goes and the text names the missing file); a skipped one keeps
 * the legacy URL. The stored payload and its hash stay the planned ones (what a delta compares),
 * so a re-plan of an unchanged message is unchanged; what was sent is rebuilt the same way from
 * the same files every time. With `files.rewriteTextLinks`, {@link rewriteTextLinks} then replaces
 * the legacy URLs of copied files the text names by their public URLs.
 */
import { jsonBytes, LIMITS } from '../target/schemas.ts'
import type { LinkedFileRow } from './sql/select-linked-files.ts'
import { linkCandidates, replaceTextLinks } from './text-links.ts'

/** What a rewrite did to one message. */
export interface AttachmentRewrite {
  readonly payload: string
  readonly copied: number
  readonly linkedOriginal: number
  readonly noted: number
}

interface WireAttachment {
  url?: unknown
  name?: unknown
  mimeType?: unknown
  size?: unknown
  [k: string]: unknown
}

/** The note a message carries for files it could not bring (`files.onFailure: note`). */
export function missingFilesNote(names: readonly string[]): string {
  return `[${names.length === 1 ? 'file' : 'files'} not migrated: ${names.join(', ')}]`
}

/** Rewrites a message payload's attachments from its files (see the file header); unchanged when it has none. */
export function attachFiles(payloadText: string, files: readonly LinkedFileRow[]): AttachmentRewrite {
  const none = { payload: payloadText, copied: 0, linkedOriginal: 0, noted: 0 }
  if (files.length === 0) {
    return none
  }
  const payload = JSON.parse(payloadText) as { type?: string; data?: { text?: string; attachments?: WireAttachment[] } }
  const attachments = payload.data?.attachments
  if (payload.data === undefined || !Array.isArray(attachments) || attachments.length === 0) {
    return none
  }
  const unused = [...files]
  const kept: WireAttachment[] = []
  const missing: string[] = []
  let copied = 0
  let linkedOriginal = 0
  for (const a of attachments) {
    const at = unused.findIndex((f) => f.legacyUrl === a.url)
    const file = at < 0 ? undefined : unused.splice(at, 1)[0]
    if (file?.state === 'copied' && file.publicUrl !== null) {
      kept.push({
        ...a,
        url: file.publicUrl,
        ...(file.bytes !== null ? { size: String(file.bytes) } : {}),
        ...(file.sniffedType !== null ? { mimeType: file.sniffedType } : {}),
      })
      copied++
    } else if (file?.state === 'failed' && file.onFailure === 'note') {
      missing.push(typeof a.name === 'string' ? a.name : file.name)
    } else {
      kept.push(a)
      if (file?.state === 'failed') {
        linkedOriginal++
      }
    }
  }
  payload.data.attachments = kept
  if (missing.length > 0) {
    const note = missingFilesNote(missing)
    const text = typeof payload.data.text === 'string' && payload.data.text.trim() !== '' ? `${payload.data.text}\n\n${note}` : note
    payload.data.text = text
    if (kept.length === 0) {
      delete payload.data.attachments
      payload.type = 'text'
    }
  }
  return { payload: JSON.stringify(payload), copied, linkedOriginal, noted: missing.length }
}

/** What `files.rewriteTextLinks` did to one message. */
export interface TextLinkRewrite {
  readonly payload: string
  /** Links in the text rewritten to the store's public URL. */
  readonly rewritten: number
  /** 1 when the rewritten text would have gone over the platform's limits: the text was left as it was. */
  readonly overLimit: number
}

/**
 * Rewrites every link of `links` (a copied file's legacy URL → its public URL) in a message
 * payload's text; leaves the payload as it is when the result would be over the platform's limits
 * on `data` (10 KB of JSON) or the whole payload (the long-text policy fitted the planned text).
 */
export function rewriteTextLinks(payloadText: string, links: ReadonlyMap<string, string>): TextLinkRewrite {
  const none = { payload: payloadText, rewritten: 0, overLimit: 0 }
  const payload = JSON.parse(payloadText) as { data?: { text?: unknown } }
  const text = payload.data?.text
  if (payload.data === undefined || typeof text !== 'string' || links.size === 0) {
    return none
  }
  const out = replaceTextLinks(text, links)
  if (out.rewritten === 0) {
    return none
  }
  payload.data.text = out.text
  const next = JSON.stringify(payload)
  if (jsonBytes(payload.data) > LIMITS.MESSAGE_DATA_BYTES_MAX || next.length > LIMITS.MESSAGE_PAYLOAD_CHARS_MAX) {
    return { ...none, overLimit: 1 }
  }
  return { payload: next, rewritten: out.rewritten, overLimit: 0 }
}

/** The links a message's own copied files give (legacy URL → public URL). */
export function ownFileLinks(files: readonly LinkedFileRow[]): Map<string, string> {
  return new Map(files.filter((f) => f.state === 'copied' && f.publicUrl !== null).map((f) => [f.legacyUrl, f.publicUrl as string]))
}

/** The URLs a message payload's text could name (for the one lookup of a batch's copied files). */
export function payloadLinkCandidates(payloadText: string): string[] {
  const text = (JSON.parse(payloadText) as { data?: { text?: unknown } }).data?.text
  return typeof text === 'string' ? linkCandidates(text) : []
}
