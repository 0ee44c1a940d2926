/** Reading the fields of Stream Chat's JSON objects; a bad one throws {@link FieldProblem}. */
import type { EpochMs, JsonObject } from '../../../src/model/records.ts'
import type { OutcomeList } from '../../rows/outcomes.ts'
import { FieldProblem } from '../../rows/problems.ts'

export { FieldProblem }

export const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v)

/** A non-empty string, else undefined. */
export const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined)

/** A Stream id (user, channel, message): a non-empty string without control characters. */
export function streamId(field: string, v: unknown): string {
  if (typeof v !== 'string' || v === '') {
    throw new FieldProblem(field, v === undefined || v === null ? `${field} is missing` : `${field} is not an id: ${JSON.stringify(v).slice(0, 40)}`)
  }
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f]/.test(v)) {
    throw new FieldProblem(field, `${field} contains a control character`)
  }
  return v
}

/** A user id from a `user` field: Stream writes the user object (`{id, …}`), its import format the id alone. */
export function userIdOf(field: string, v: unknown): string {
  return streamId(isObject(v) ? `${field}.id` : field, isObject(v) ? v.id : v)
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/

/** An RFC 3339 time with its fraction cut to milliseconds (Date.parse reads at most three digits). */
function toMillis(v: string): string {
  const dot = v.indexOf('.', 19)
  if (dot < 0) {
    return v
  }
  let end = dot + 1
  while (end < v.length && v.charCodeAt(end) >= 48 && v.charCodeAt(end) <= 57) {
    end++
  }
  return end - dot > 4 ? v.slice(0, dot + 4) + v.slice(end) : v
}

const digit = (s: string, i: number) => s.charCodeAt(i) - 48

/** The UTC epoch ms of `YYYY-MM-DDTHH:MM:SS[.fraction]Z` (what Stream writes), else undefined: the general path reads it. */
function utcMillis(v: string): number | undefined {
  const n = v.length
  if (n < 20 || v.charCodeAt(n - 1) !== 90 /* Z */ || v.charCodeAt(10) !== 84 /* T */ || !RFC3339.test(v)) {
    return undefined
  }
  const year = digit(v, 0) * 1000 + digit(v, 1) * 100 + digit(v, 2) * 10 + digit(v, 3)
  const month = digit(v, 5) * 10 + digit(v, 6)
  const day = digit(v, 8) * 10 + digit(v, 9)
  const hour = digit(v, 11) * 10 + digit(v, 12)
  const minute = digit(v, 14) * 10 + digit(v, 15)
  const second = digit(v, 17) * 10 + digit(v, 18)
  if (year < 100 || month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 59) {
    return undefined // Date.parse decides (and refuses, or reads the year 99 as 99, not 1999)
  }
  let ms = 0
  if (v.charCodeAt(19) === 46 /* . */) {
    for (let i = 20, scale = 100; i < n - 1 && i < 23; i++, scale /= 10) {
      ms += digit(v, i) * scale
    }
  }
  // A day past the month's end (`02-30`) rolls over, as it does in Date.parse.
  return Date.UTC(year, month - 1, day, hour, minute, second, ms)
}

/**
 * A timestamp as Stream writes them (RFC 3339 in UTC, `2021-02-17T08:17:49.745857Z`: micro- or
 * nanoseconds are cut to milliseconds). Absent or null: undefined. UTC times are read digit by
 * digit (the common case, and the cost of three times a message); others by `Date.parse`.
 */
export function timeMs(field: string, v: unknown): EpochMs | undefined {
  if (v === undefined || v === null) {
    return undefined
  }
  const fast = typeof v === 'string' ? utcMillis(v) : undefined
  if (fast !== undefined) {
    return fast
  }
  const ms = typeof v === 'string' && RFC3339.test(v) ? Date.parse(toMillis(v)) : Number.NaN
  if (!Number.isFinite(ms)) {
    throw new FieldProblem(field, `${field} is not an RFC 3339 time: ${JSON.stringify(v).slice(0, 40)}`)
  }
  return ms
}

/** A required timestamp. */
export function requiredTimeMs(field: string, v: unknown): EpochMs {
  const ms = timeMs(field, v)
  if (ms === undefined) {
    throw new FieldProblem(field, `${field} is missing`)
  }
  return ms
}

/** The fields of `o` not in `known`: Stream's custom data, which sits beside the documented fields. */
export function customFields(o: JsonObject, known: ReadonlySet<string>): JsonObject | undefined {
  let custom: Record<string, JsonObject[string]> | undefined
  for (const k in o) {
    if (!known.has(k) && Object.hasOwn(o, k)) {
      custom ??= {}
      custom[k] = o[k]
    }
  }
  return custom
}

/** Notes `customFields: in-metadata` (kept) or `dropped` when a record has custom fields. */
export function noteCustom(out: OutcomeList | undefined, custom: JsonObject | undefined, kept: boolean): void {
  if (custom !== undefined) {
    out?.add('customFields', kept ? 'in-metadata' : 'dropped')
  }
}

/** The latest of some times. */
export const latest = (...ts: (number | undefined)[]): number | undefined =>
  ts.reduce<number | undefined>((a, t) => (t === undefined ? a : a === undefined ? t : Math.max(a, t)), undefined)
