/**
 * The text a Slack message carries outside its `text`, so that none is dropped without a word:
 * - `attachments` (app cards, integration posts, legacy formatting): each card as mrkdwn lines —
 *   `pretext`; `title` (a `<title_link|title>` link when it has one); `text`; each field as
 *   `title: value`; `footer` — or its `fallback` when it has none of those. A link preview (an
 *   attachment with `from_url`: Slack's unfurl of a URL the text already holds) is not rendered; its
 *   URL is listed in `metadata.linkPreviews`.
 * - `blocks` (Block Kit): `rich_text` is what `text` holds (not repeated); a `table`'s rows as
 *   `cell | cell` lines; `header`, `section` (text and fields) and `context` text when `text` does
 *   not already hold it; other blocks (`image`, `divider`, `actions`, `file`, `video`, `input`, …)
 *   have no text to carry and are listed by type in `metadata.otherBlocks`.
 * Pure.
 */
import type { JsonObject } from '../../../src/model/records.ts'
import { isObject, str } from './fields.ts'
import { unescapeSlack } from './message-text.ts'
import { withoutSecrets } from './url-secrets.ts'

export interface MessageExtras {
  /** Mrkdwn to convert with the message's own text (attachments). */
  readonly attachmentText: string
  /** Plain text to append after it (blocks). */
  readonly blockText: string
  readonly linkPreviews: readonly string[]
  readonly otherBlocks: readonly string[]
}

/** A message with neither attachments nor blocks (most of them): one shared answer, nothing allocated. */
const NO_EXTRAS: MessageExtras = Object.freeze({ attachmentText: '', blockText: '', linkPreviews: Object.freeze([]), otherBlocks: Object.freeze([]) })

function card(a: JsonObject): string {
  const lines: string[] = []
  const push = (v: unknown) => {
    const t = str(v)
    if (t !== undefined && t.trim() !== '') {
      lines.push(t)
    }
  }
  push(a.pretext)
  const title = str(a.title)
  const link = str(a.title_link)
  push(title !== undefined && link !== undefined ? `<${link}|${title}>` : title)
  push(a.text)
  if (Array.isArray(a.fields)) {
    for (const f of a.fields) {
      if (isObject(f)) {
        push([str(f.title), str(f.value)].filter((x) => x !== undefined).join(': '))
      }
    }
  }
  push(a.footer)
  if (lines.length === 0) {
    push(a.fallback)
  }
  return lines.join('\n')
}

/** Plain text of a rich_text element tree (a table cell), users and channels as written. */
function richText(e: unknown, handleOf: (id: string) => string | undefined): string {
  if (Array.isArray(e)) {
    return e.map((x) => richText(x, handleOf)).join('')
  }
  if (!isObject(e)) {
    return ''
  }
  switch (e.type) {
    case 'text':
      return str(e.text) ?? ''
    case 'link':
      return str(e.text) ?? withoutSecrets(str(e.url) ?? '')
    case 'user':
      return `@${handleOf(str(e.user_id) ?? '') ?? str(e.user_id) ?? ''}`
    case 'emoji':
      return `:${str(e.name) ?? ''}:`
    default:
      return Array.isArray(e.elements) ? richText(e.elements, handleOf) : (str(e.text) ?? '')
  }
}

function cell(c: unknown, handleOf: (id: string) => string | undefined): string {
  if (!isObject(c)) {
    return ''
  }
  return c.type === 'raw_text' ? (str(c.text) ?? '') : richText(c.elements ?? c.text, handleOf)
}

/** A text object's string (`{type: 'mrkdwn'|'plain_text', text}`), Slack's escapes undone. */
const textOf = (t: unknown) => (isObject(t) ? unescapeSlack(str(t.text) ?? '') : '')

function blockLines(b: JsonObject, handleOf: (id: string) => string | undefined): string[] | undefined {
  switch (b.type) {
    case 'rich_text':
      return []
    case 'table':
      return Array.isArray(b.rows) ? b.rows.map((r) => (Array.isArray(r) ? r.map((c) => cell(c, handleOf)).join(' | ') : '')) : []
    case 'header':
      return [textOf(b.text)]
    case 'section':
      return [textOf(b.text), ...(Array.isArray(b.fields) ? b.fields.map(textOf) : [])]
    case 'context':
      return Array.isArray(b.elements)
        ? [
            b.elements
              .map(textOf)
              .filter((t) => t !== '')
              .join(' '),
          ]
        : []
    default:
      return undefined
  }
}

export function extrasOf(m: JsonObject, ownText: string, handleOf: (id: string) => string | undefined): MessageExtras {
  if (m.attachments === undefined && m.blocks === undefined) {
    return NO_EXTRAS
  }
  const cards: string[] = []
  const linkPreviews: string[] = []
  for (const a of Array.isArray(m.attachments) ? m.attachments : []) {
    if (!isObject(a)) {
      continue
    }
    const from = str(a.from_url)
    if (from !== undefined) {
      linkPreviews.push(withoutSecrets(from))
      continue
    }
    const t = card(a)
    if (t !== '') {
      cards.push(t)
    }
  }
  const lines: string[] = []
  const otherBlocks: string[] = []
  const plainOwn = unescapeSlack(ownText)
  for (const b of Array.isArray(m.blocks) ? m.blocks : []) {
    if (!isObject(b)) {
      continue
    }
    const got = blockLines(b, handleOf)
    if (got === undefined) {
      otherBlocks.push(str(b.type) ?? '?')
      continue
    }
    for (const l of got) {
      if (l.trim() !== '' && (b.type === 'table' || !plainOwn.includes(l))) {
        lines.push(l)
      }
    }
  }
  return { attachmentText: cards.join('\n\n'), blockText: lines.join('\n'), linkPreviews, otherBlocks }
}
