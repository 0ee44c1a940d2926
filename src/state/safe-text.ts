/**
 * Values the ledger writes, made storable. Postgres `text` refuses U+0000 (the whole statement
 * fails, and with it a plan); `jsonb` and `json` refuse the `\u0000` escape and escaped unpaired
 * surrogates. The mappings and connectors keep such characters out of items and ids, so these
 * functions only guard against what slips through (a connector, a platform message, a ledger
 * written by an older version) — a bad value must never stop a plan or a verify.
 */
import { hash } from 'node:crypto'

import { type RawBuilder, sql } from 'kysely'

import { hasUnstorable, printable } from '../target/characters.ts'

/** Text for a `text` column: unstorable characters written as a visible `\uXXXX`. */
export function storableText(s: string): string {
  return printable(s)
}

/** Like {@link storableText}, but `null` stays `null`. */
export function storableTextOrNull(s: string | null): string | null {
  return s === null ? null : printable(s)
}

/**
 * A key column (target keys, which are unique per entity): escaped like {@link storableText}, plus
 * a hash of the original when anything was escaped, so two keys never become one.
 */
export function storableKey(s: string): string {
  return hasUnstorable(s) ? `${printable(s)}~${hash('sha1', s, 'base64url').slice(0, 10)}` : s
}

/** JSON escapes `jsonb` refuses: `\u0000` and escaped surrogates (JSON.stringify escapes only unpaired ones). */
const UNSAFE_ESCAPE = /\\u(?:0000|[dD][89a-fA-F][0-9a-fA-F]{2})/g

/**
 * JSON text for a `jsonb` column (run stats): each refused escape becomes `\ufffd`, which keeps the
 * text valid JSON (the escape's own backslash is kept, so a preceding `\\` still pairs up).
 */
export function storableJson(value: unknown): string {
  return JSON.stringify(value).replace(UNSAFE_ESCAPE, '\\ufffd')
}

/** The key of a cursor stored as the base64 of its JSON text (see {@link cursorJson}). */
const ENCODED_CURSOR = '~json-base64'

/**
 * JSON text for a cursor: unchanged when `jsonb` takes it, else `{"~json-base64": …}`, which
 * {@link cursorValue} decodes. Lossless, because a keyset cursor must resume at the exact key.
 */
export function cursorJson(value: unknown): string {
  const text = JSON.stringify(value)
  if (!/\\u(?:0000|[dD][89a-fA-F])/.test(text)) {
    return text
  }
  return JSON.stringify({ [ENCODED_CURSOR]: Buffer.from(text, 'utf8').toString('base64') })
}

/** A cursor as saved by {@link cursorJson}, decoded. */
export function cursorValue(stored: unknown): unknown {
  if (stored === null || typeof stored !== 'object' || Array.isArray(stored)) {
    return stored
  }
  const encoded = (stored as Record<string, unknown>)[ENCODED_CURSOR]
  if (typeof encoded !== 'string' || Object.keys(stored).length !== 1) {
    return stored
  }
  return JSON.parse(Buffer.from(encoded, 'base64').toString('utf8'))
}

/**
 * `payload` (JSON text) as `jsonb` whatever a ledger written by any version holds: each refused
 * escape read as U+FFFD. For SQL that reads fields of stored payloads (ids, types), never for
 * comparing texts.
 */
export function payloadJsonb(column = 'payload'): RawBuilder<unknown> {
  return sql`regexp_replace(${sql.ref(column)}, ${'\\\\u(0000|d[89a-f][0-9a-f]{2})'}, ${'\\\\ufffd'}, 'gi')::jsonb`
}
