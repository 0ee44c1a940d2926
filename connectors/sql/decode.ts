/**
 * Turning raw column values into canonical values. Each decoder either returns the value or throws a
 * {@link FieldProblem} naming the field, which the row decoder turns into a `RowProblem` (the row is
 * quarantined, the read goes on).
 */
import type { EpochMs, JsonObject } from '../../src/model/records.ts'
import { FieldProblem } from '../rows/problems.ts'

export { FieldProblem }

/**
 * How an entity's timestamp columns are stored.
 * - `auto`: timestamp/datetime columns and ISO-8601 text are parsed (UTC when no offset is given);
 *   numbers are epoch milliseconds.
 * - `iso`: text only (ISO 8601 / SQL `YYYY-MM-DD HH:MM:SS[.fff][±hh:mm]`), UTC when no offset.
 * - `epoch-s`, `epoch-ms`, `epoch-us`: numbers (or numeric text) in seconds, milliseconds or
 *   microseconds since 1970-01-01 UTC; timestamp/datetime values are still accepted.
 */
export const TIME_FORMATS = ['auto', 'iso', 'epoch-s', 'epoch-ms', 'epoch-us'] as const
export type TimeFormat = (typeof TIME_FORMATS)[number]

/** The latest instant accepted: 9999-12-31T23:59:59.999Z. */
export const MAX_EPOCH_MS = 253_402_300_799_999

const SQL_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?)?\s*(Z|[+-]\d{2}(?::?\d{2}(?::?\d{2})?)?)?$/i
const NUMERIC = /^-?\d+(?:\.\d+)?$/
const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]

/**
 * Parses `YYYY-MM-DD[( |T)HH:MM[:SS[.fraction]]][Z|±HH[:MM]]` to epoch ms; a missing offset means
 * UTC. Returns `undefined` for anything else, or an impossible date (2023-02-30, 25:00).
 * Fractions below a millisecond are truncated.
 */
export function parseSqlTimestamp(text: string): EpochMs | undefined {
  const m = SQL_TIME.exec(text.trim())
  if (m === null) {
    return undefined
  }
  const [, y, mo, d, h = '0', mi = '0', s = '0', frac = '', tz] = m
  const year = Number(y)
  const month = Number(mo)
  const day = Number(d)
  const hour = Number(h)
  const minute = Number(mi)
  const second = Number(s)
  if (month < 1 || month > 12 || day < 1 || day > (DAYS_IN_MONTH[month - 1] as number)) {
    return undefined
  }
  if (month === 2 && day === 29 && !(year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0))) {
    return undefined
  }
  if (hour > 23 || minute > 59 || second > 59) {
    return undefined
  }
  const ms = Number((frac + '000').slice(0, 3))
  let t = Date.UTC(year, month - 1, day, hour, minute, second, ms)
  // Date.UTC maps years 0–99 to 1900–1999.
  if (year < 100) {
    t = new Date(t).setUTCFullYear(year)
  }
  if (tz !== undefined && tz.toUpperCase() !== 'Z') {
    const sign = tz.startsWith('-') ? -1 : 1
    const digits = tz.slice(1).replaceAll(':', '')
    const offH = Number(digits.slice(0, 2))
    const offM = Number(digits.slice(2, 4) || '0')
    const offS = Number(digits.slice(4, 6) || '0')
    if (offH > 15 || offM > 59 || offS > 59) {
      return undefined
    }
    t -= sign * ((offH * 60 + offM) * 60 + offS) * 1000
  }
  return t
}

function checkRange(field: string, ms: number, raw: unknown): EpochMs {
  if (!Number.isFinite(ms) || ms < 0 || ms > MAX_EPOCH_MS) {
    throw new FieldProblem(field, `invalid timestamp ${JSON.stringify(String(raw))}: outside 1970-01-01..9999-12-31`)
  }
  return ms
}

function fromEpoch(field: string, n: number, format: TimeFormat, raw: unknown): EpochMs {
  switch (format) {
    case 'epoch-s':
      return checkRange(field, Math.floor(n * 1000), raw)
    case 'epoch-us':
      return checkRange(field, Math.floor(n / 1000), raw)
    default:
      return checkRange(field, Math.floor(n), raw)
  }
}

/**
 * Decodes a timestamp column to epoch ms; `undefined` for SQL NULL or empty text. Throws a
 * {@link FieldProblem} for anything unparseable or out of range.
 */
export function decodeTimestamp(field: string, value: unknown, format: TimeFormat = 'auto'): EpochMs | undefined {
  if (value === null || value === undefined) {
    return undefined
  }
  if (value instanceof Date) {
    return checkRange(field, value.getTime(), value)
  }
  if (typeof value === 'number' || typeof value === 'bigint') {
    if (format === 'iso') {
      throw new FieldProblem(field, `invalid timestamp ${String(value)}: expected ISO text, got a number`)
    }
    return fromEpoch(field, Number(value), format, value)
  }
  if (typeof value === 'string') {
    const text = value.trim()
    if (text === '') {
      return undefined
    }
    // MySQL's "zero date" means "no date".
    if (/^0000-00-00(?:[ T]00:00:00(?:\.0+)?)?$/.test(text)) {
      return undefined
    }
    if (format !== 'iso' && NUMERIC.test(text)) {
      return fromEpoch(field, Number(text), format, value)
    }
    const ms = parseSqlTimestamp(text)
    if (ms === undefined) {
      throw new FieldProblem(field, `invalid timestamp ${JSON.stringify(value.slice(0, 64))}`)
    }
    return checkRange(field, ms, value)
  }
  throw new FieldProblem(field, `invalid timestamp: unexpected ${typeof value}`)
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true })

/**
 * Decodes a text column; `undefined` for SQL NULL. Bytes (blob/varbinary values) must be valid
 * UTF-8. With `lossy` (engines whose driver decodes text itself and replaces undecodable bytes:
 * SQLite, Postgres with `SQL_ASCII`), a U+FFFD in the text is taken as the trace of invalid UTF-8.
 */
export function decodeText(field: string, value: unknown, lossy = false): string | undefined {
  if (value === null || value === undefined) {
    return undefined
  }
  if (typeof value === 'string') {
    if ((lossy && value.includes('\uFFFD')) || !value.isWellFormed()) {
      throw new FieldProblem(field, 'invalid UTF-8 in the text')
    }
    return value
  }
  if (typeof value === 'number' || typeof value === 'bigint') {
    return String(value)
  }
  if (value instanceof Uint8Array) {
    try {
      return strictUtf8.decode(value)
    } catch {
      throw new FieldProblem(field, 'invalid UTF-8 in the text')
    }
  }
  if (value instanceof Date) {
    return value.toISOString()
  }
  throw new FieldProblem(field, `expected text, got ${typeof value}`)
}

/** Like {@link decodeText}, but `undefined` for empty text too. */
export function decodeOptionalText(field: string, value: unknown, lossy = false): string | undefined {
  const text = decodeText(field, value, lossy)
  return text === '' ? undefined : text
}

/** A required, non-empty text (ids, names). */
export function decodeRequiredText(field: string, value: unknown, lossy = false): string {
  const text = decodeText(field, value, lossy)
  if (text === undefined) {
    throw new FieldProblem(field, 'is null')
  }
  if (text.trim() === '') {
    throw new FieldProblem(field, 'is empty')
  }
  return text
}

/** Booleans as the engines store them: `true`/`false`, 0/1 (`tinyint(1)`), `'t'`/`'f'`, `'true'`… */
export function decodeBoolean(field: string, value: unknown, fallback = false): boolean {
  if (value === null || value === undefined) {
    return fallback
  }
  if (typeof value === 'boolean') {
    return value
  }
  if (typeof value === 'number' || typeof value === 'bigint') {
    return Number(value) !== 0
  }
  if (typeof value === 'string') {
    const v = value.trim().toLowerCase()
    if (['1', 't', 'true', 'y', 'yes'].includes(v)) {
      return true
    }
    if (['0', 'f', 'false', 'n', 'no', ''].includes(v)) {
      return false
    }
  }
  if (value instanceof Uint8Array && value.length === 1) {
    return value[0] !== 0
  }
  throw new FieldProblem(field, `expected a boolean, got ${JSON.stringify(String(value)).slice(0, 40)}`)
}

/**
 * Parses a JSON column (text, or already parsed by the driver for json/jsonb); `undefined` for NULL
 * or empty text. Broken JSON, or JSON of the wrong shape, is a {@link FieldProblem}.
 */
export function decodeJson(field: string, value: unknown, shape: 'object', lossy?: boolean): JsonObject | undefined
export function decodeJson(field: string, value: unknown, shape: 'array', lossy?: boolean): unknown[] | undefined
export function decodeJson(field: string, value: unknown, shape: 'object' | 'array', lossy = false): unknown {
  if (value === null || value === undefined) {
    return undefined
  }
  // The empty object many schemas store by default (the Mattermost connector asks for NULL
  // instead, but a MySQL `json` column may not compare equal to the text '{}'): no parse needed.
  if (value === '{}' && shape === 'object') {
    return {}
  }
  let parsed: unknown = value
  if (typeof value === 'string' || value instanceof Uint8Array) {
    const text = decodeText(field, value, lossy) as string
    if (text.trim() === '') {
      return undefined
    }
    try {
      parsed = JSON.parse(text)
    } catch (err) {
      throw new FieldProblem(field, `broken JSON: ${(err as Error).message}`)
    }
  }
  if (parsed === null) {
    return undefined
  }
  if (shape === 'array' ? !Array.isArray(parsed) : typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new FieldProblem(field, `expected a JSON ${shape}`)
  }
  return parsed
}

/** A list of strings: a JSON array, a native array (Postgres `text[]`), or comma-separated text. */
export function decodeStringList(field: string, value: unknown, lossy = false): string[] | undefined {
  if (value === null || value === undefined) {
    return undefined
  }
  // The empty list many schemas store by default: no parse needed.
  if (value === '[]') {
    return []
  }
  if (Array.isArray(value)) {
    return value.map((v) => decodeRequiredText(field, v, lossy))
  }
  const text = decodeText(field, value, lossy) as string
  const trimmed = text.trim()
  if (trimmed === '') {
    return undefined
  }
  if (trimmed.startsWith('[')) {
    const list = decodeJson(field, trimmed, 'array') ?? []
    return list.map((v) => (typeof v === 'number' ? String(v) : decodeRequiredText(field, v)))
  }
  return trimmed
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
}

/**
 * An id holding U+0000 can be neither stored (Postgres text refuses it) nor changed (two ids would
 * become one): its row is a problem. Unpaired surrogates never get here: {@link decodeText} refuses them.
 */
function checkIdText(field: string, id: string): string {
  const at = id.indexOf('\u0000')
  if (at !== -1) {
    throw new FieldProblem(field, `legacy id contains U+0000 at position ${at}`)
  }
  return id
}

/** A legacy id: text or an integer, as a string. */
export function decodeId(field: string, value: unknown, lossy = false): string {
  if (typeof value === 'number' || typeof value === 'bigint') {
    return String(value)
  }
  return checkIdText(field, decodeRequiredText(field, value, lossy))
}

/** An optional legacy id (NULL or empty → `undefined`). */
export function decodeOptionalId(field: string, value: unknown, lossy = false): string | undefined {
  if (typeof value === 'number' || typeof value === 'bigint') {
    return String(value)
  }
  const id = decodeOptionalText(field, value, lossy)
  return id === undefined ? undefined : checkIdText(field, id)
}

// eslint-disable-next-line no-control-regex -- U+0000 is one of the characters printableId escapes
const UNPRINTABLE_IN_ID = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g

/**
 * A raw id column as a `RowProblem` names it: U+0000 and unpaired surrogates written `\uXXXX`, bytes
 * as lossy UTF-8, so the name of a bad row can always be stored and shown.
 */
export function printableId(value: unknown): string {
  const text = value instanceof Uint8Array ? new TextDecoder().decode(value) : String(value ?? '?')
  return text.replace(UNPRINTABLE_IN_ID, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
}

/** A non-negative integer (sizes); `undefined` for NULL. */
export function decodeCount(field: string, value: unknown): number | undefined {
  if (value === null || value === undefined || value === '') {
    return undefined
  }
  const n = Number(value)
  if (!Number.isSafeInteger(n) || n < 0) {
    throw new FieldProblem(field, `expected a non-negative integer, got ${JSON.stringify(String(value))}`)
  }
  return n
}

/** One of the allowed values (case-insensitive), or the fallback for NULL. */
export function decodeChoice<T extends string>(field: string, value: unknown, allowed: readonly T[], fallback?: T): T {
  if (value === null || value === undefined || value === '') {
    if (fallback !== undefined) {
      return fallback
    }
    throw new FieldProblem(field, 'is null')
  }
  const v = String(value).trim().toLowerCase()
  const found = allowed.find((a) => a === v)
  if (found === undefined) {
    throw new FieldProblem(field, `expected one of ${allowed.join(', ')}, got ${JSON.stringify(String(value)).slice(0, 40)}`)
  }
  return found
}

/** A copy of `o` without its `undefined` properties (records compare and serialise cleanly). */
export function compact<T extends object>(o: T): T {
  // A fresh object rather than `delete`: deleting properties turns an object into a slow
  // dictionary, and every record of a read goes through here.
  const r: Record<string, unknown> = {}
  for (const key of Object.keys(o)) {
    const v = (o as Record<string, unknown>)[key]
    if (v !== undefined) {
      r[key] = v
    }
  }
  return r as T
}
