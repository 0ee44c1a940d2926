/**
 * The files of a planned message under `files.mode` (issue 27): with `rehost`, the files its
 * attachments point at — each attachment's locator (`LegacyAttachment.source`, or the `http` reader
 * on its URL), name, size and type — recorded by the ledger with the item so the message waits for
 * their copies; with `omit`, the message goes without its attachments (a message left without text
 * says which files it had). `reference` sends the legacy URLs as they are.
 */
import type { FileLocator, LegacyAttachment, LegacyMessage } from '../model/index.ts'
import { missingFilesNote, type PlannedFile } from '../state/index.ts'
import type { Attachment, MessageImport } from '../target/schemas.ts'

/** The locator of an attachment without one: its URL over HTTP. */
export function httpLocator(url: string): FileLocator {
  let host = 'invalid-url'
  try {
    host = new URL(url).host || host
  } catch {
    // Not a URL: the http reader reports it as missing, naming the message.
  }
  return { reader: 'http', ref: url, host }
}

function attachmentsOf(payload: MessageImport): readonly Attachment[] {
  const data = (payload as { data?: { attachments?: Attachment[] } }).data
  return data?.attachments ?? []
}

/** The files of one message item's attachments, in their order (undefined: it has none). */
export function filesOfMessage(record: LegacyMessage, payload: MessageImport): PlannedFile[] | undefined {
  const attachments = attachmentsOf(payload)
  if (attachments.length === 0) {
    return undefined
  }
  const legacy = record.attachments ?? []
  return attachments.map((a) => {
    const from: LegacyAttachment | undefined = legacy.find((l) => l.url === a.url)
    const size = from?.size ?? (a.size !== undefined ? Number(a.size) : undefined)
    return {
      locator: from?.source ?? httpLocator(a.url),
      url: a.url,
      name: a.name,
      ...(size !== undefined && Number.isFinite(size) ? { size } : {}),
      ...(a.mimeType !== '' ? { type: a.mimeType } : {}),
    }
  })
}

/** A message payload without its attachments (`files.mode: omit`), and how many it had. */
export function omitAttachments(payload: MessageImport): { payload: MessageImport; omitted: number } {
  const attachments = attachmentsOf(payload)
  if (attachments.length === 0) {
    return { payload, omitted: 0 }
  }
  const data = { ...(payload as { data: Record<string, unknown> }).data }
  delete data.attachments
  const text = typeof data.text === 'string' ? data.text : ''
  if (text.trim() === '') {
    data.text = missingFilesNote(attachments.map((a) => a.name))
  }
  return { payload: { ...payload, type: 'text', data } as MessageImport, omitted: attachments.length }
}
