/**
 * Slack's "message attachment" format, which Mattermost (`props.attachments`,
 * model/slack_attachment.go) and Rocket.Chat (`attachments[]`, core-typings
 * `MessageAttachmentDefault`) both took over for integration posts: the readable lines of one
 * attachment, in the order the products show them — `pretext`, `author_name`, `title` with its
 * `title_link`, `text`, each field as `title: value`, the connector's media URL keys, `footer` —
 * and `fallback` only when nothing else is readable. The keys it rendered come back too, so each
 * connector keeps the rest (colour, icons, buttons…) in the message's metadata its own way.
 */

/** The keys every attachment renders (before the connector's media keys and `fallback`). */
const RENDERED = ['pretext', 'author_name', 'title', 'title_link', 'text', 'fields', 'footer'] as const

/** A value as one line of text: trimmed strings, numbers and booleans; undefined when empty or not text. */
export function textOf(v: unknown): string | undefined {
  if (typeof v === 'string') {
    return v.trim() === '' ? undefined : v.trim()
  }
  return typeof v === 'number' || typeof v === 'boolean' ? String(v) : undefined
}

function fieldLines(fields: unknown): string[] {
  const lines: string[] = []
  for (const f of Array.isArray(fields) ? (fields as unknown[]) : []) {
    if (f === null || typeof f !== 'object' || Array.isArray(f)) {
      continue
    }
    const title = textOf((f as Record<string, unknown>).title)
    const value = textOf((f as Record<string, unknown>).value)
    if (title !== undefined || value !== undefined) {
      lines.push(title !== undefined && value !== undefined ? `${title}: ${value}` : (title ?? value ?? ''))
    }
  }
  return lines
}

/**
 * One attachment's lines and the keys rendered. `mediaKeys` (Rocket.Chat: `image_url`,
 * `audio_url`, `video_url`) are rendered as lines of their own, before the footer.
 */
export function attachmentLines(a: Record<string, unknown>, mediaKeys: readonly string[] = []): { lines: string[]; rendered: Set<string> } {
  const lines: string[] = []
  const rendered = new Set<string>([...RENDERED, ...mediaKeys])
  const push = (v: string | undefined) => {
    if (v !== undefined) {
      lines.push(v)
    }
  }
  push(textOf(a.pretext))
  push(textOf(a.author_name))
  const title = textOf(a.title)
  const link = textOf(a.title_link)
  push(title !== undefined && link !== undefined ? `${title} (${link})` : (title ?? link))
  push(textOf(a.text))
  lines.push(...fieldLines(a.fields))
  for (const k of mediaKeys) {
    push(textOf(a[k]))
  }
  push(textOf(a.footer))
  const fallback = textOf(a.fallback)
  if (lines.length === 0 && fallback !== undefined) {
    lines.push(fallback)
    rendered.add('fallback')
  }
  return { lines, rendered }
}
