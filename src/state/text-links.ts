/**
 * Links to legacy files inside a message's text (`files.rewriteTextLinks`, issue 27): the URLs a
 * text names, and the text with every one of them that is a copied file's legacy URL replaced by
 * the store's public URL. A URL is a token `http(s)://…` up to white space or a quote; sentence
 * punctuation after it (`see https://x/a.png.` or `(https://x/a.png)`) is not part of it when the
 * token with it is no known file. Pure: the ledger looks the candidates up (one query per batch)
 * and verify matches a listed text against the same rewrite.
 */
const URL_TOKEN = /https?:\/\/[^\s<>"'`]+/gi
/** What may follow a URL in prose without belonging to it. */
const TRAILING = /[.,;:!?)\]}*_~]$/

/** A token and its forms without trailing punctuation, longest first. */
function forms(token: string): string[] {
  const out = [token]
  let t = token
  while (TRAILING.test(t)) {
    t = t.slice(0, -1)
    out.push(t)
  }
  return out
}

/** Every URL the text could name (each token and its forms without trailing punctuation). */
export function linkCandidates(text: string): string[] {
  const out = new Set<string>()
  for (const m of text.matchAll(URL_TOKEN)) {
    for (const f of forms(m[0])) {
      out.add(f)
    }
  }
  return [...out]
}

/** A part of a text: literal, or a link found in `links` (its legacy and public URL). */
export type TextPart = string | { readonly legacy: string; readonly public: string }

/** The text cut into literal parts and the links of `links` it names (legacy URL → public URL). */
export function textLinkParts(text: string, links: ReadonlyMap<string, string>): TextPart[] {
  const parts: TextPart[] = []
  let at = 0
  for (const m of text.matchAll(URL_TOKEN)) {
    const legacy = forms(m[0]).find((f) => links.has(f))
    if (legacy === undefined) {
      continue
    }
    const start = m.index
    parts.push(text.slice(at, start), { legacy, public: links.get(legacy) as string })
    at = start + legacy.length
  }
  parts.push(text.slice(at))
  return parts.filter((p) => p !== '')
}

/** The text with each link replaced by its public URL, and how many were. */
export function replaceTextLinks(text: string, links: ReadonlyMap<string, string>): { text: string; rewritten: number } {
  if (links.size === 0) {
    return { text, rewritten: 0 }
  }
  const parts = textLinkParts(text, links)
  let rewritten = 0
  const out = parts.map((p) => {
    if (typeof p === 'string') {
      return p
    }
    rewritten++
    return p.public
  })
  return { text: rewritten === 0 ? text : out.join(''), rewritten }
}

/**
 * True when `actual` is `text` with each of its links either rewritten or left as the legacy URL
 * (verify: a file copied after its message was sent, or a rewrite over the platform's limit, left
 * the legacy URL; either way nothing was lost).
 */
export function matchesWithLinks(actual: string, text: string, links: ReadonlyMap<string, string>): boolean {
  const parts = textLinkParts(text, links)
  const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
  const pattern = parts.map((p) => (typeof p === 'string' ? escape(p) : `(?:${escape(p.public)}|${escape(p.legacy)})`)).join('')
  return new RegExp(`^${pattern}$`, 'u').test(actual)
}
