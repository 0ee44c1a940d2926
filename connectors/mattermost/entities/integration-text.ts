/**
 * The readable text of a Mattermost integration post. Integrations (incoming webhooks, the Jira,
 * GitLab, Jenkins and Alertmanager plugins, slash commands) put their content in
 * `props.attachments` — Mattermost's "message attachments", Slack's attachment format
 * (model/slack_attachment.go: `pretext`, `author_name`, `title`, `title_link`, `text`,
 * `fields[{title, value, short}]`, `footer`, `fallback`, …) — and often leave `message` empty.
 * This renders each attachment as plain lines, in the order Mattermost shows them, and returns
 * the attachment keys it did not render (colour, images, buttons…) so the caller keeps them in the
 * post's metadata rather than losing them.
 */
import type { JsonObject } from '../../../src/model/records.ts'

/** The attachment keys rendered into text (`fallback` only when nothing else is). */
const RENDERED = ['pretext', 'author_name', 'title', 'title_link', 'text', 'fields', 'footer'] as const

export interface IntegrationText {
  /** The rendered text: attachments separated by a blank line; '' when none has readable content. */
  readonly text: string
  /** How many attachments gave text. */
  readonly rendered: number
  /** Each attachment's keys that were not rendered (empty objects left out), or undefined if none. */
  readonly leftover: JsonObject[] | undefined
}

const str = (v: unknown): string | undefined => {
  if (typeof v === 'string') {
    return v.trim() === '' ? undefined : v.trim()
  }
  return typeof v === 'number' || typeof v === 'boolean' ? String(v) : undefined
}

function fieldLines(fields: unknown): string[] {
  if (!Array.isArray(fields)) {
    return []
  }
  const lines: string[] = []
  for (const f of fields) {
    if (f === null || typeof f !== 'object' || Array.isArray(f)) {
      continue
    }
    const { title: t, value: v } = f as JsonObject
    const title = str(t)
    const value = str(v)
    if (title !== undefined || value !== undefined) {
      lines.push(title !== undefined && value !== undefined ? `${title}: ${value}` : (title ?? value ?? ''))
    }
  }
  return lines
}

function renderOne(a: JsonObject): { lines: string[]; rendered: Set<string> } {
  const lines: string[] = []
  const rendered = new Set<string>(RENDERED)
  const push = (v: string | undefined) => {
    if (v !== undefined) {
      lines.push(v)
    }
  }
  push(str(a.pretext))
  push(str(a.author_name))
  const title = str(a.title)
  const link = str(a.title_link)
  push(title !== undefined && link !== undefined ? `${title} (${link})` : (title ?? link))
  push(str(a.text))
  lines.push(...fieldLines(a.fields))
  push(str(a.footer))
  const fallback = str(a.fallback)
  if (lines.length === 0 && fallback !== undefined) {
    lines.push(fallback)
    rendered.add('fallback')
  }
  return { lines, rendered }
}

/** Renders `props.attachments` (anything else there is ignored: not an array → nothing rendered). */
export function integrationText(attachments: unknown): IntegrationText {
  if (!Array.isArray(attachments)) {
    return { text: '', rendered: 0, leftover: undefined }
  }
  const blocks: string[] = []
  const leftover: JsonObject[] = []
  for (const a of attachments) {
    if (a === null || typeof a !== 'object' || Array.isArray(a)) {
      continue
    }
    const { lines, rendered } = renderOne(a as JsonObject)
    if (lines.length > 0) {
      blocks.push(lines.join('\n'))
    }
    const rest: JsonObject = {}
    for (const [k, v] of Object.entries(a as JsonObject)) {
      if (!rendered.has(k) && v !== null && v !== '' && !(Array.isArray(v) && v.length === 0)) {
        rest[k] = v
      }
    }
    leftover.push(rest)
  }
  const anyLeft = leftover.some((r) => Object.keys(r).length > 0)
  return { text: blocks.join('\n\n'), rendered: blocks.length, leftover: anyLeft ? leftover : undefined }
}
