/** Attachment helpers every connector that builds file URLs shares. */
import type { LegacyAttachment, LegacyMessageType } from '../../src/model/records.ts'

/** The message type its attachments imply: all images → image, etc.; mixed → file. */
export function typeOfAttachments(attachments: readonly LegacyAttachment[]): LegacyMessageType {
  if (attachments.length === 0) {
    return 'text'
  }
  const kinds = new Set(attachments.map((a) => /^(image|audio|video)\//.exec(a.mimeType ?? '')?.[1] ?? 'file'))
  return kinds.size === 1 ? ([...kinds][0] as LegacyMessageType) : 'file'
}

/** `<base>/<path>` with each path segment URL-encoded. */
export function fileUrl(base: string, path: string): string {
  return `${base}/${path.replace(/^\/+/, '').split('/').map(encodeURIComponent).join('/')}`
}
