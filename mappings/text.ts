/**
 * Text operations of the message mapping: JSON byte accounting, splitting and truncating long
 * text, mention rewriting, parent quotes. Pure. @internal
 */

/** Bytes a code point takes inside a JSON string literal, UTF-8 encoded (as `JSON.stringify` escapes it). */
export function jsonCharBytes(cp: number): number {
  if (cp === 0x22 || cp === 0x5c) {
    return 2
  }
  if (cp < 0x20) {
    return cp === 0x08 || cp === 0x09 || cp === 0x0a || cp === 0x0c || cp === 0x0d ? 2 : 6
  }
  if (cp < 0x80) {
    return 1
  }
  if (cp < 0x800) {
    return 2
  }
  if (cp >= 0xd800 && cp <= 0xdfff) {
    return 6
  } // a lone surrogate is escaped as \uXXXX
  if (cp < 0x10000) {
    return 3
  }
  return 4
}

/** Bytes of `JSON.stringify(text)` minus the two quotes. */
export function jsonTextBytes(text: string): number {
  let n = 0
  for (let i = 0; i < text.length; i++) {
    const cp = text.codePointAt(i) as number
    n += jsonCharBytes(cp)
    if (cp > 0xffff) {
      i++
    }
  }
  return n
}

const WS = /\s/

/** The longest prefix of `text` from `start` whose JSON bytes fit `budget`: its end index, and the last whitespace in it. */
function fit(text: string, start: number, budget: number): { end: number; lastWs: number } {
  let bytes = 0
  let i = start
  let lastWs = -1
  while (i < text.length) {
    const cp = text.codePointAt(i) as number
    const c = jsonCharBytes(cp)
    if (bytes + c > budget) {
      break
    }
    bytes += c
    if (WS.test(text[i] as string)) {
      lastWs = i
    }
    i += cp > 0xffff ? 2 : 1
  }
  return { end: i, lastWs }
}

/** Moves a hard cut back before a `<@uid:…>` token it would split. */
function avoidMentionCut(text: string, start: number, cut: number): number {
  const open = text.lastIndexOf('<@uid:', cut - 1)
  if (open <= start) {
    return cut
  }
  const close = text.indexOf('>', open)
  return close >= cut ? open : cut
}

/**
 * Splits `text` into parts of at most `budget` JSON bytes each, preferring to cut at whitespace
 * (the whitespace character at a cut is dropped) and never inside a character or a mention token.
 * Whitespace-only parts are dropped. Returns `undefined` when more than `maxParts` would be needed.
 */
export function splitText(text: string, budget: number, maxParts: number): string[] | undefined {
  if (budget < 16) {
    return undefined
  }
  const parts: string[] = []
  let start = 0
  while (start < text.length) {
    const { end, lastWs } = fit(text, start, budget)
    let next: number
    let cut: number
    if (end >= text.length) {
      cut = text.length
      next = cut
    } else if (lastWs > start && lastWs - start >= (end - start) / 2) {
      cut = lastWs
      next = lastWs + 1
    } else {
      cut = avoidMentionCut(text, start, end)
      next = cut
    }
    const part = text.slice(start, cut)
    if (part.trim() !== '') {
      parts.push(part)
      if (parts.length > maxParts) {
        return undefined
      }
    }
    start = next
  }
  return parts
}

/** The longest prefix of `text` that, with `marker` appended, fits `budget` JSON bytes. */
export function truncateText(text: string, budget: number, marker: string): string {
  const room = budget - jsonTextBytes(marker)
  const { end } = fit(text, 0, Math.max(0, room))
  return text.slice(0, avoidMentionCut(text, 0, end)).trimEnd() + marker
}

const MENTION_TOKEN = /<@uid:([^>\s]+)>/g

/** Platform uids mentioned in `text` (`<@uid:…>` tokens), in order of appearance, without repeats. */
export function mentionedUids(text: string): string[] {
  if (!text.includes('<@uid:')) {
    return []
  }
  const seen = new Set<string>()
  for (const m of text.matchAll(MENTION_TOKEN)) {
    seen.add(m[1] as string)
  }
  return [...seen]
}

/** Characters that, right before `@`, make it part of a word or an address rather than a mention. */
const NOT_BEFORE_MENTION = /[A-Za-z0-9_.@<-]/
/** Characters that, right after a handle, show it continues (a longer name, not this mention). */
const HANDLE_CHAR = /[A-Za-z0-9_-]/

/** A UTF-16 unit the way a case-insensitive, non-unicode RegExp compares it (ECMA-262 Canonicalize). */
function canonical(unit: string): string {
  const upper = unit.toUpperCase()
  if (upper.length !== 1) {
    return unit
  }
  return unit.charCodeAt(0) >= 128 && upper.charCodeAt(0) < 128 ? unit : upper
}

/** True when `text` holds `name` at `at`, compared case-insensitively unit by unit. */
function holdsAt(text: string, at: number, name: string): boolean {
  if (at + name.length > text.length) {
    return false
  }
  for (let j = 0; j < name.length; j++) {
    const a = text[at + j] as string
    const b = name[j] as string
    if (a !== b && canonical(a) !== canonical(b)) {
      return false
    }
  }
  return true
}

/**
 * Rewrites mentions of known users to `<@uid:UID>`: the canonical id form `<@uid:LEGACY_ID>` and
 * `@handle` (case-insensitive, not inside a word or an email address; trailing punctuation stays;
 * the longest handle that fits wins).
 * @param byLegacyId legacy user id → platform uid.
 * @param byHandle handle as written after `@` → platform uid.
 */
export function rewriteMentions(text: string, byLegacyId: ReadonlyMap<string, string>, byHandle: ReadonlyMap<string, string>): string {
  let result = text
  if (result.includes('<@uid:')) {
    for (const [legacyId, uid] of byLegacyId) {
      result = result.split(`<@uid:${legacyId}>`).join(`<@uid:${uid}>`)
    }
  }
  if (byHandle.size === 0 || !result.includes('@')) {
    return result
  }
  const handles = new Map<string, string>()
  for (const [h, uid] of byHandle) {
    if (h !== '') {
      handles.set(h.toLowerCase(), uid)
    }
  }
  if (handles.size === 0) {
    return result
  }
  const names = [...handles.keys()].sort((a, b) => b.length - a.length)
  // A scan with the semantics of /(^|[^A-Za-z0-9_.@<-])@(name|…)(?![A-Za-z0-9_-]|\.[A-Za-z0-9_-])/gi,
  // without compiling a RegExp per message: the character before `@` must not be one a previous
  // mention consumed.
  let out = ''
  let copied = 0
  for (let at = result.indexOf('@'); at !== -1; at = result.indexOf('@', at + 1)) {
    if (at > 0 && (at === copied || NOT_BEFORE_MENTION.test(result[at - 1] as string))) {
      continue
    }
    for (const name of names) {
      const end = at + 1 + name.length
      if (!holdsAt(result, at + 1, name)) {
        continue
      }
      const next = result[end]
      if (next !== undefined && (HANDLE_CHAR.test(next) || (next === '.' && HANDLE_CHAR.test(result[end + 1] ?? '')))) {
        continue
      }
      out += `${result.slice(copied, at)}<@uid:${handles.get(name)}>`
      copied = end
      at = end - 1
      break
    }
  }
  return copied === 0 ? result : out + result.slice(copied)
}

/** `> Name: first words…` followed by a blank line, for quoting a thread parent. */
export function quoteOf(parentText: string, words: number, senderName?: string): string {
  const plain = parentText.replace(MENTION_TOKEN, '@$1').trim()
  const all = plain.split(/\s+/).filter((w) => w !== '')
  const shown = all.slice(0, words).join(' ')
  const more = all.length > words ? ' …' : ''
  const who = senderName !== undefined && senderName !== '' ? `${senderName}: ` : ''
  return `> ${who}${shown}${more}\n\n`
}
