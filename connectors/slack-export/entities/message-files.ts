/**
 * The files a Slack message shares (`files`, or `file` in old `file_share` messages, and the files
 * bot and unfurl posts nest in `attachments[].files[]`) → attachments
 * by reference. Slack's `url_private` needs a Slack login (or a token); official exports append
 * the export's own token (`?token=xoxe-…`, `?t=xoxe-…`) to it, which is a secret: it is always
 * removed here (url-secrets.ts). With
 * `fileUrl` set, the URL is built from the operator's copy of the files instead.
 */
import type { FileLocator } from '../../../src/model/files.ts'
import type { JsonObject, LegacyAttachment, LegacyMessageType } from '../../../src/model/records.ts'
import { isObject, str } from './fields.ts'
import { withoutToken } from './url-secrets.ts'

export { withoutToken } from './url-secrets.ts'

/** File modes and access states Slack uses for files whose content is gone or hidden. */
const UNAVAILABLE_MODES = new Set(['tombstone', 'hidden_by_limit'])
const UNAVAILABLE_ACCESS = new Set(['access_denied', 'file_not_found'])

export interface FilesContext {
  /** `fileUrl` template, or undefined for Slack's own URL. */
  readonly template?: string
  readonly conversationId: string
  /** Where the files lane reads a file's bytes (`source.files`: see files-locator.ts); absent: no locator. */
  readonly locate?: (file: SlackFileRef) => FileLocator | undefined
}

/** What of a file locating its bytes needs. */
export interface SlackFileRef {
  readonly id: string
  readonly name: string
  /** `url_private` as the export has it (its token still in it: never stored as it is). */
  readonly urlPrivate?: string
}

export interface MessageFiles {
  readonly attachments: LegacyAttachment[]
  /** Files listed without content: `{id, reason}`. */
  readonly unavailable: JsonObject[]
}

function fill(template: string, id: string, name: string, conversationId: string): string {
  return template
    .replaceAll('{id}', encodeURIComponent(id))
    .replaceAll('{name}', encodeURIComponent(name))
    .replaceAll('{conversation}', encodeURIComponent(conversationId))
}

/** Whether a message can share files at all (most do not): `files`, `file` or `attachments`. */
export const mayHaveFiles = (message: JsonObject): boolean =>
  message.files !== undefined || message.file !== undefined || message.attachments !== undefined

export function filesOf(message: JsonObject, ctx: FilesContext): MessageFiles | undefined {
  const own = Array.isArray(message.files) ? message.files : isObject(message.file) ? [message.file] : []
  // Bot and unfurl posts nest hosted files in their attachments (`attachments[].files[]`).
  const nested = Array.isArray(message.attachments) ? message.attachments.flatMap((a) => (isObject(a) && Array.isArray(a.files) ? a.files : [])) : []
  const list = [...own, ...nested]
  if (list.length === 0) {
    return undefined
  }
  const attachments: LegacyAttachment[] = []
  const unavailable: JsonObject[] = []
  for (const f of list) {
    if (!isObject(f)) {
      // Not dropped without a word: listed as a file the message had but that cannot be read.
      unavailable.push({ id: '?', reason: 'not a file object' })
      continue
    }
    const id = str(f.id) ?? '?'
    const mode = str(f.mode)
    const access = str(f.file_access)
    if ((mode !== undefined && UNAVAILABLE_MODES.has(mode)) || (access !== undefined && UNAVAILABLE_ACCESS.has(access))) {
      unavailable.push({ id, reason: access !== undefined && UNAVAILABLE_ACCESS.has(access) ? access : (mode as string) })
      continue
    }
    const name = str(f.name) ?? str(f.title) ?? id
    const slackUrl = str(f.url_private)
    const url =
      ctx.template !== undefined ? fill(ctx.template, id, name, ctx.conversationId) : slackUrl === undefined ? undefined : withoutToken(slackUrl)
    if (url === undefined) {
      unavailable.push({ id, reason: 'no url_private' })
      continue
    }
    const a: { -readonly [K in keyof LegacyAttachment]: LegacyAttachment[K] } = { url, name }
    const mime = str(f.mimetype)
    if (mime !== undefined) {
      a.mimeType = mime
    }
    const ext = str(f.filetype)
    if (ext !== undefined) {
      a.extension = ext
    }
    if (typeof f.size === 'number' && Number.isInteger(f.size) && f.size >= 0) {
      a.size = f.size
    }
    const source = ctx.template === undefined ? ctx.locate?.({ id, name, ...(slackUrl === undefined ? {} : { urlPrivate: slackUrl }) }) : undefined
    if (source !== undefined) {
      a.source = source
    }
    attachments.push(a)
  }
  return { attachments, unavailable }
}

/** `image`/`audio`/`video` when every file is one, else `file`. */
export function typeOfAttachments(list: readonly LegacyAttachment[]): LegacyMessageType {
  for (const kind of ['image', 'audio', 'video'] as const) {
    if (list.every((a) => a.mimeType?.startsWith(`${kind}/`) === true)) {
      return kind
    }
  }
  return 'file'
}
