/**
 * Zulip's mention syntax in message Markdown: `@**Full Name**`, `@**Full Name|12**` (with the user
 * id, what Zulip's composer writes when two users share a name), the silent `@_**Full Name|12**`,
 * the wildcards `@**all**`, `@**everyone**`, `@**channel**`, `@**stream**`, `@**topic**`, and user
 * groups `@*group*` (not users: left alone).
 */

/** Wildcard mentions: they notify a whole stream or topic, not a user. */
export const WILDCARDS = ['all', 'everyone', 'channel', 'stream', 'topic'] as const

/** As Zulip's Markdown finds them: `@` at the start or after whitespace, a quote, `(`, `,`, `:` or `<`. */
const MENTION = /(?<![^\s'"(,:<])@(_?)\*\*([^*\n]+?)\*\*/g

export interface ParsedMention {
  /** What follows `@`, lowercase, e.g. `**alice archer|12**`: the mapping's handle. */
  readonly handle: string
  /** The user id written in the mention, if any. */
  readonly id?: string
  /** The full name (lowercase) to look up when no id is written. */
  readonly name?: string
}

export interface ParsedMentions {
  readonly users: readonly ParsedMention[]
  readonly wildcards: readonly string[]
}

/** Finds the mentions in `text`. Pure; no lookups. */
export function parseMentions(text: string): ParsedMentions {
  const users: ParsedMention[] = []
  const wildcards = new Set<string>()
  for (const m of text.matchAll(MENTION)) {
    const inner = (m[2] as string).trim()
    const handle = `${m[1] as string}**${m[2] as string}**`.toLowerCase()
    const withId = /^(.*)\|(\d+)$/.exec(inner)
    if (withId !== null) {
      users.push({ handle, id: withId[2] as string })
    } else if ((WILDCARDS as readonly string[]).includes(inner.toLowerCase())) {
      wildcards.add(inner.toLowerCase())
    } else {
      users.push({ handle, name: inner.toLowerCase() })
    }
  }
  return { users, wildcards: [...wildcards] }
}

/** The names (lowercase) a page of raw messages mentions without an id, to look up before decoding. */
export function mentionedNames(rows: readonly Record<string, unknown>[]): string[] {
  const names = new Set<string>()
  for (const row of rows) {
    if (typeof row.content !== 'string' || (!row.content.includes('@**') && !row.content.includes('@_**'))) {
      continue
    }
    for (const u of parseMentions(row.content).users) {
      if (u.name !== undefined) {
        names.add(u.name)
      }
    }
  }
  return [...names]
}

/**
 * Resolves parsed mentions: an id written in the mention is taken as is; a name is resolved when
 * exactly one user has it (`names`: lowercase full name → ids). Returns the ids in order of first
 * appearance and each resolved handle → id.
 */
export function resolveMentions(
  parsed: ParsedMentions,
  names: ReadonlyMap<string, readonly string[]>,
): { ids: string[]; handles: Record<string, string> } {
  const ids: string[] = []
  const handles: Record<string, string> = {}
  for (const u of parsed.users) {
    const candidates = u.id !== undefined ? [u.id] : (names.get(u.name ?? '') ?? [])
    if (candidates.length !== 1) {
      continue
    }
    const id = candidates[0] as string
    handles[u.handle] = id
    if (!ids.includes(id)) {
      ids.push(id)
    }
  }
  return { ids, handles }
}
