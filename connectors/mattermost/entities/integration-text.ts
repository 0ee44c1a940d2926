/**
 * The readable text of a Mattermost integration post. Integrations (incoming webhooks, the Jira,
 * GitLab, Jenkins and Alertmanager plugins, slash commands) put their content in
 * `props.attachments` — Mattermost's "message attachments", Slack's attachment format
 * (model/slack_attachment.go: `pretext`, `author_name`, `title`, `title_link`, `text`,
 * `fields[{title, value, short}]`, `footer`, `fallback`, …) — and often leave `message` empty.
 * This renders each attachment as plain lines, in the order Mattermost shows them
 * (connectors/cards/attachment-lines.ts, shared with Rocket.Chat), and returns
 * the attachment keys it did not render (colour, images, buttons…) so the caller keeps them in the
 * post's metadata rather than losing them.
 */
import type { JsonObject } from '../../../src/model/records.ts'
import { attachmentLines } from '../../cards/attachment-lines.ts'

export interface IntegrationText {
  /** The rendered text: attachments separated by a blank line; '' when none has readable content. */
  readonly text: string
  /** How many attachments gave text. */
  readonly rendered: number
  /** Each attachment's keys that were not rendered (empty objects left out), or undefined if none. */
  readonly leftover: JsonObject[] | undefined
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
    const { lines, rendered } = attachmentLines(a as JsonObject)
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
