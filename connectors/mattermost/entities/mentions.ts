/**
 * `@username` mentions in a Mattermost message. Mattermost stores none relationally; it parses the
 * text the same way: a mention is `@` not preceded by a word character (so e-mail addresses are not
 * mentions) followed by a username (`[a-z0-9._-]`, starting with a letter or digit). Trailing `.`,
 * `-` and `_` may be sentence punctuation, so the name with them trimmed is tried as well.
 * A user of a shared channel's remote cluster is stored as `name:remote` (Mattermost's
 * sharedchannel `mungUsername`, with `~n`/`-n` suffixes on collision), and mentioned so.
 */

/** `@channel`, `@all`, `@here`: they notify a whole channel, not a user. */
export const CHANNEL_MENTIONS = ['channel', 'all', 'here'] as const

const MENTION = /(?<![\p{L}\p{N}_@.-])@([a-z0-9][a-z0-9._~-]*(?::[a-z0-9][a-z0-9._~-]*)?)/giu

export interface ParsedMentions {
  /** Usernames to look up (lowercase), each with its trimmed variant, in order of appearance. */
  readonly candidates: readonly string[]
  /** The channel-wide mentions found. */
  readonly channel: readonly string[]
  /** Each mention as written (lowercase), in order, with the candidates for it, longest first. */
  readonly tokens: readonly (readonly string[])[]
}

/** Finds the mentions in `text`. Pure; no lookups. */
export function parseMentions(text: string): ParsedMentions {
  const candidates = new Set<string>()
  const channel = new Set<string>()
  const tokens: string[][] = []
  for (const m of text.matchAll(MENTION)) {
    const raw = (m[1] as string).toLowerCase()
    const trimmed = raw.replace(/[._-]+$/, '')
    if ((CHANNEL_MENTIONS as readonly string[]).includes(trimmed)) {
      channel.add(trimmed)
      continue
    }
    const options = trimmed !== raw && trimmed !== '' ? [raw, trimmed] : [raw]
    for (const o of options) {
      candidates.add(o)
    }
    tokens.push(options)
  }
  return { candidates: [...candidates], channel: [...channel], tokens }
}

/**
 * Resolves parsed mentions against `usernames` (lowercase username → legacy user id): the mentioned
 * ids in order of first appearance, and each handle (as matched) → id. Unknown names are left out.
 */
export function resolveMentions(parsed: ParsedMentions, usernames: ReadonlyMap<string, string>): { ids: string[]; handles: Record<string, string> } {
  const ids: string[] = []
  const handles: Record<string, string> = {}
  for (const options of parsed.tokens) {
    const handle = options.find((o) => usernames.has(o))
    if (handle === undefined) {
      continue
    }
    const id = usernames.get(handle) as string
    handles[handle] = id
    if (!ids.includes(id)) {
      ids.push(id)
    }
  }
  return { ids, handles }
}
