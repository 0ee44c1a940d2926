/**
 * Slack's message text (`mrkdwn`) to plain text with chatferry's mentions. Slack writes every
 * reference between angle brackets and escapes `&`, `<`, `>` in the rest:
 * - `<@U123>` / `<@U123|alice>`: a user → `@handle` (Slack's `name`), with the id in `mentions`
 *   and `handle → id` in `mentionHandles`, so the mentions policy rewrites it; a user the export
 *   does not know → `@label` or `@U123`, its id still in `mentions` (counted unresolved);
 * - `<#C123|general>` → `#general`; `<!here>`, `<!channel>`, `<!everyone>` → `@here`… (listed in
 *   `channelMentions`); `<!subteam^S1|@eng>` → `@eng`; `<!date^…|fallback>` → the fallback;
 * - `<https://x|label>` → `label (https://x)`; `<https://x>` → `https://x`; `<mailto:a@b|a@b>` → `a@b`.
 * Every link's URL loses its credential parameters (url-secrets.ts). Pure.
 */
import { withoutSecrets } from './url-secrets.ts'

export interface TextLookups {
  /** A user's handle (Slack `name`) by id, if the export has the user. */
  handleOf(userId: string): string | undefined
  /** A conversation's name by id, if the export has it. */
  channelNameOf(channelId: string): string | undefined
}

export interface ConvertedText {
  readonly text: string
  readonly mentions: readonly string[]
  readonly handles: Readonly<Record<string, string>>
  readonly channelMentions: readonly string[]
}

const TOKEN = /<([^<>]*)>/g
const BROADCASTS = new Set(['here', 'channel', 'everyone'])

export function unescapeSlack(s: string): string {
  return s.includes('&') ? s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&') : s
}

function splitLabel(body: string): [string, string | undefined] {
  const bar = body.indexOf('|')
  return bar === -1 ? [body, undefined] : [body.slice(0, bar), body.slice(bar + 1)]
}

/** What a text without any `<…>` reference refers to: nothing (shared, never changed). */
const NO_REFERENCES = Object.freeze({ mentions: Object.freeze([]), handles: Object.freeze({}), channelMentions: Object.freeze([]) })

export function convertText(raw: string, lookups: TextLookups): ConvertedText {
  if (!raw.includes('<')) {
    return { text: unescapeSlack(raw), ...NO_REFERENCES }
  }
  const mentions: string[] = []
  const handles: Record<string, string> = {}
  const channelMentions: string[] = []
  let out = ''
  let last = 0
  for (const m of raw.matchAll(TOKEN)) {
    out += unescapeSlack(raw.slice(last, m.index))
    last = m.index + m[0].length
    const [target, label] = splitLabel(m[1] as string)
    if (target === '' || /^\s/.test(target)) {
      // Slack escapes a literal `<`; an unescaped one (hand-made exports) is kept as text.
      out += unescapeSlack(m[0])
      continue
    }
    const shown = label === undefined ? undefined : unescapeSlack(label)
    if (target.startsWith('@')) {
      const id = target.slice(1)
      const handle = lookups.handleOf(id)
      if (!mentions.includes(id)) {
        mentions.push(id)
      }
      if (handle !== undefined) {
        handles[handle.toLowerCase()] = id
        out += `@${handle}`
      } else {
        out += `@${shown?.replace(/^@/, '') ?? id}`
      }
    } else if (target.startsWith('#')) {
      // Current exports write `<#C123|>` (no name): the name comes from the export's conversations.
      out += `#${(shown !== undefined && shown !== '' ? shown : undefined) ?? lookups.channelNameOf(target.slice(1)) ?? target.slice(1)}`
    } else if (target.startsWith('!')) {
      const special = target.slice(1)
      const word = special.split('^')[0] as string
      if (BROADCASTS.has(word)) {
        if (!channelMentions.includes(word)) {
          channelMentions.push(word)
        }
        out += `@${word}`
      } else if (word === 'subteam') {
        out += shown ?? '@group'
      } else {
        // A special without a fallback label (`<!date^…>` missing its `|fallback>`, one Slack adds
        // later) stays as written rather than vanishing from the text.
        out += shown ?? unescapeSlack(m[0])
      }
    } else {
      const url = withoutSecrets(unescapeSlack(target))
      // A label that is itself the URL (`<https://x?token=…|https://x?token=…>`) loses the same parameters.
      const label = shown !== undefined && /^https?:\/\//i.test(shown) ? withoutSecrets(shown) : shown
      if (label === undefined || label === '' || label === url) {
        out += url
      } else if (url.startsWith('mailto:') && url.slice(7) === label) {
        out += label
      } else {
        out += `${label} (${url})`
      }
    }
  }
  out += unescapeSlack(raw.slice(last))
  return { text: out, mentions, handles, channelMentions }
}
