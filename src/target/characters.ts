/**
 * Characters neither the platform nor Postgres can store: U+0000 (Postgres `text` refuses the
 * byte, `jsonb` refuses the `\u0000` escape; the platform answers 500) and unpaired UTF-16
 * surrogates (not Unicode: `jsonb` refuses them, UTF-8 cannot encode them). Every other code
 * point, astral characters such as emoji included, passes untouched. The import schemas refuse
 * them, the mappings strip or quarantine them (`policies.text`), the ledger escapes them. Pure.
 */

/** True when `s` holds a character that cannot be stored. Cheap: both checks are native. */
export function hasUnstorable(s: string): boolean {
  return s.includes('\u0000') || !s.isWellFormed()
}

function isHigh(u: number): boolean {
  return u >= 0xd800 && u <= 0xdbff
}

function isLow(u: number): boolean {
  return u >= 0xdc00 && u <= 0xdfff
}

/** Index of the unstorable UTF-16 unit at or after `from`, or -1. */
function nextUnstorable(s: string, from: number): number {
  for (let i = from; i < s.length; i++) {
    const u = s.charCodeAt(i)
    if (u === 0) {
      return i
    }
    if (isHigh(u)) {
      if (i + 1 < s.length && isLow(s.charCodeAt(i + 1))) {
        i++
      } else {
        return i
      }
    } else if (isLow(u)) {
      return i
    }
  }
  return -1
}

function hex(u: number): string {
  return `U+${u.toString(16).toUpperCase().padStart(4, '0')}`
}

/**
 * Why `s` cannot be stored, naming the first bad character and its position (index in the string,
 * counted in UTF-16 units from 0), e.g. `contains U+0000 at position 17`; `undefined` when it can.
 */
export function unstorableReason(s: string): string | undefined {
  if (!hasUnstorable(s)) {
    return undefined
  }
  const i = nextUnstorable(s, 0)
  const u = s.charCodeAt(i)
  return u === 0 ? `contains U+0000 at position ${i}` : `contains an unpaired surrogate ${hex(u)} at position ${i}`
}

/** `s` without its unstorable characters, and how many were removed. */
export function stripUnstorable(s: string): { readonly text: string; readonly removed: number } {
  if (!hasUnstorable(s)) {
    return { text: s, removed: 0 }
  }
  let out = ''
  let removed = 0
  let copied = 0
  for (let i = nextUnstorable(s, 0); i !== -1; i = nextUnstorable(s, i + 1)) {
    out += s.slice(copied, i)
    copied = i + 1
    removed++
  }
  return { text: out + s.slice(copied), removed }
}

/**
 * `s` with each unstorable character written as a visible `\uXXXX`, for messages and reports that
 * must quote a bad value (a legacy id, a JSON key) without carrying it.
 */
export function printable(s: string): string {
  if (!hasUnstorable(s)) {
    return s
  }
  let out = ''
  let copied = 0
  for (let i = nextUnstorable(s, 0); i !== -1; i = nextUnstorable(s, i + 1)) {
    out += `${s.slice(copied, i)}\\u${s.charCodeAt(i).toString(16).padStart(4, '0')}`
    copied = i + 1
  }
  return out + s.slice(copied)
}
