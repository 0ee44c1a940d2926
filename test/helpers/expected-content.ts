/**
 * The oracle's message content (mappings/README.md § Message policies, `mentions`, `threads`, and
 * the attachments paragraph): the type, the text where the rules state it exactly, the attachments.
 */
import type { LegacyAttachment, LegacyMessage } from '../../src/model/index.ts'
import { type Check, type ItemFacts, state } from './expected-facts.ts'
import { isPlanned, type World } from './expected-world.ts'

const MEDIA = ['image', 'audio', 'video', 'file'] as const

/** The documented type: a legacy media type kept; a text message with attachments inferred when every MIME type is given. */
export function typeOf(m: LegacyMessage, attachments: readonly LegacyAttachment[]): string | undefined {
  if (attachments.length === 0) {
    return m.type === 'text' ? 'text' : undefined
  }
  if ((MEDIA as readonly string[]).includes(m.type)) {
    return m.type
  }
  const kinds = new Set(attachments.map((a) => a.mimeType?.split('/')[0]))
  if (kinds.has(undefined)) {
    return undefined // a MIME type derived from the URL: not stated
  }
  const [only] = kinds as Set<string>
  return kinds.size === 1 && ['image', 'audio', 'video'].includes(only as string) ? only : 'file'
}

/**
 * Whether `mentions: rewrite` may change the text: it holds `<@uid:`, an `@handle` of the record's
 * `mentionHandles`, or `@username` of a planned user (compared without case). How a recognised
 * mention is cut from the words around it is the mappings' unit tests' business.
 */
function mayMention(w: World, m: LegacyMessage, text: string): boolean {
  const lower = text.toLowerCase()
  if (lower.includes('<@uid:')) {
    return true
  }
  const handles = [...Object.keys(m.mentionHandles ?? {}).map((h) => h.toLowerCase())]
  for (let at = lower.indexOf('@'); at >= 0; at = lower.indexOf('@', at + 1)) {
    const rest = lower.slice(at + 1)
    if (handles.some((h) => rest.startsWith(h)) || [...w.usernames].some((u) => rest.startsWith(u))) {
      return true
    }
  }
  return false
}

/**
 * The text where the rules state it exactly: as written, the tombstone text, or `[<kind>]` for an
 * empty system message; a reply (not a tombstone) quoting its parent's words (`threads.quoteParent`)
 * starts with `> <parent's sender>: ` and ends with its own text. Not stated: text a mention may be
 * rewritten in ({@link mayMention}).
 */
export function textCheck(w: World, m: LegacyMessage, base: string | undefined, tombstone: boolean): Check | undefined {
  if (base === undefined) {
    return { eq: null }
  }
  if (base === '' || mayMention(w, m, base)) {
    return undefined
  }
  const parent = m.threadParentId === undefined ? undefined : w.messages.get(m.threadParentId)
  if (w.policies.threads.quoteParent > 0 && !tombstone && isPlanned(parent) && parent.hasText) {
    return { startsWith: `> ${parent.senderName}: `, endsWith: base }
  }
  return { eq: base }
}

export function attachmentFacts(facts: ItemFacts, attachments: readonly LegacyAttachment[]): void {
  state(facts, ['data', 'attachments'], attachments.length === 0 ? { eq: null } : { keys: attachments.map((_, i) => String(i)) })
  attachments.forEach((a, i) => {
    const at = ['data', 'attachments', i]
    state(facts, [...at, 'url'], { eq: a.url })
    // Name, extension and MIME type are derived from the URL when the source lacks them: stated when given.
    for (const k of ['name', 'extension', 'mimeType'] as const) {
      if (a[k]) {
        state(facts, [...at, k], { eq: a[k] })
      }
    }
    if (a.size !== undefined) {
      state(facts, [...at, 'size'], { eq: String(a.size) })
    }
  })
}
