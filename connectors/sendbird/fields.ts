/**
 * Reading the fields of Sendbird's objects, as the Platform API answers them and as the Data Export
 * writes them (JSON, or CSV cells: numbers and booleans as text). A bad field throws
 * {@link FieldProblem}, which the readers turn into a RowProblem naming the field.
 */
import type { EpochMs, JsonObject } from '../../src/model/records.ts'
import { FieldProblem } from '../rows/problems.ts'

export { FieldProblem }

export const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v)

/** A non-empty string (a number is written as its digits: CSV cells, numeric ids), else undefined. */
export function str(v: unknown): string | undefined {
  if (typeof v === 'number' && Number.isFinite(v)) {
    return String(v)
  }
  return typeof v === 'string' && v !== '' ? v : undefined
}

/** A required id: a non-empty string or an integer, without control characters. */
export function id(field: string, v: unknown): string {
  const s = typeof v === 'number' && Number.isSafeInteger(v) ? String(v) : typeof v === 'string' ? v : undefined
  if (s === undefined || s === '') {
    throw new FieldProblem(
      field,
      v === undefined || v === null || v === '' ? `${field} is missing` : `${field} is not an id: ${JSON.stringify(v).slice(0, 40)}`,
    )
  }
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f]/.test(s)) {
    throw new FieldProblem(field, `${field} contains a control character`)
  }
  return s
}

/** A number, or the digits of one (CSV); undefined when absent or empty. */
export function num(field: string, v: unknown): number | undefined {
  if (v === undefined || v === null || v === '') {
    return undefined
  }
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^-?\d+(\.\d+)?$/.test(v) ? Number(v) : NaN
  if (!Number.isFinite(n)) {
    throw new FieldProblem(field, `${field} is not a number: ${JSON.stringify(v).slice(0, 40)}`)
  }
  return n
}

/** `true`/`false`, or their text (CSV). Anything else is false. */
export const bool = (v: unknown): boolean => v === true || v === 'true' || v === 'True' || v === 1 || v === '1'

/**
 * A Sendbird time in epoch ms. Messages carry milliseconds; users' and channels' `created_at` and
 * members' `joined_ts` are Unix seconds: a value below 10^11 (before 1973 in ms) is read as seconds.
 * 0 and absent are "none" (undefined).
 */
export function time(field: string, v: unknown): EpochMs | undefined {
  const n = num(field, v)
  if (n === undefined || n === 0) {
    return undefined
  }
  if (n < 0 || !Number.isInteger(n)) {
    throw new FieldProblem(field, `${field} is not a time: ${JSON.stringify(v).slice(0, 40)}`)
  }
  return n < 1e11 ? n * 1000 : n
}

/** A required time. */
export function requiredTime(field: string, v: unknown): EpochMs {
  const t = time(field, v)
  if (t === undefined) {
    throw new FieldProblem(field, `${field} is missing`)
  }
  return t
}

/** The user id of a user object (`{user_id}`) or of a bare id. */
export const userIdOf = (v: unknown): string | undefined => (isObject(v) ? str(v.user_id) : str(v))

/** Sendbird's `data` (free text, often JSON): parsed when it is a JSON object, else kept as text. */
export function dataField(v: unknown): unknown {
  const s = str(v)
  if (s === undefined) {
    return isObject(v) ? v : undefined
  }
  if (s.startsWith('{')) {
    try {
      const parsed = JSON.parse(s) as unknown
      return isObject(parsed) ? parsed : s
    } catch {
      return s
    }
  }
  return s
}

/** Only the keys with a value (undefined dropped), for records and metadata. A loop: it runs several times per row. */
export function defined<T extends Record<string, unknown>>(o: T): { [K in keyof T]: Exclude<T[K], undefined> } {
  const out: Record<string, unknown> = {}
  for (const k in o) {
    const v = o[k]
    if (v !== undefined) {
      out[k] = v
    }
  }
  return out as { [K in keyof T]: Exclude<T[K], undefined> }
}
