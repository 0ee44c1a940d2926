/** Reading the fields of Slack's JSON objects; a bad one throws {@link FieldProblem}. */
import type { EpochMs, JsonObject } from '../../../src/model/records.ts'
import { FieldProblem } from '../../rows/problems.ts'

export { FieldProblem }

export const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v)

/** A non-empty string, else undefined. */
export const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined)

/** A Slack id (`U…`, `C…`, `D…`): a non-empty string without control characters. */
export function slackId(field: string, v: unknown): string {
  if (typeof v !== 'string' || v === '') {
    throw new FieldProblem(
      field,
      v === undefined || v === null ? `${field} is missing` : `${field} is not a Slack id: ${JSON.stringify(v).slice(0, 40)}`,
    )
  }
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f]/.test(v)) {
    throw new FieldProblem(field, `${field} contains a control character`)
  }
  return v
}

const isDigit = (c: number): boolean => c >= 48 && c <= 57

/**
 * True when `v` is a Slack message timestamp (`"1503435956.000247"`: seconds and microseconds):
 * 1–12 digits, then optionally a dot and 1–6 digits. A loop rather than a pattern: it runs several
 * times a message (sorting, positions, `ts`, `thread_ts`, `edited.ts`).
 */
export function isTs(v: unknown): v is string {
  if (typeof v !== 'string') {
    return false
  }
  const n = v.length
  let i = 0
  while (i < n && isDigit(v.charCodeAt(i))) {
    i++
  }
  if (i === 0 || i > 12) {
    return false
  }
  if (i === n) {
    return true
  }
  const micros = n - i - 1
  if (v.charCodeAt(i) !== 46 /* . */ || micros < 1 || micros > 6) {
    return false
  }
  for (let j = i + 1; j < n; j++) {
    if (!isDigit(v.charCodeAt(j))) {
      return false
    }
  }
  return true
}

/** The whole seconds of a valid `ts`, read digit by digit (no allocation: it runs several times per message). */
function secondsOf(ts: string): number {
  let n = 0
  for (let i = 0; i < ts.length; i++) {
    const c = ts.charCodeAt(i)
    if (c === 46) {
      break
    }
    n = n * 10 + (c - 48)
  }
  return n
}

/** The microseconds of a valid `ts`: its digits after the dot as if right-padded to six (`.5` is 500,000). */
function microsOf(ts: string): number {
  const dot = ts.indexOf('.')
  if (dot < 0) {
    return 0
  }
  let m = 0
  for (let i = dot + 1; i < ts.length; i++) {
    m = m * 10 + (ts.charCodeAt(i) - 48)
  }
  return m * 10 ** (6 - (ts.length - dot - 1))
}

/** A message timestamp (`ts`, `thread_ts`, `edited.ts`) in epoch milliseconds (microseconds dropped). */
export function tsMs(field: string, v: unknown): EpochMs {
  if (!isTs(v)) {
    throw new FieldProblem(field, `${field} is not a Slack timestamp ("seconds.micros"): ${JSON.stringify(v)?.slice(0, 40)}`)
  }
  return secondsOf(v) * 1000 + Math.floor(microsOf(v) / 1000)
}

/** Below this a `ts` as one number ({@link tsNumber}) is exact (2^53 ≈ 9.007e15; seconds before the year 2255). */
const EXACT_TS = 9e15

/** Compares two valid timestamps exactly (seconds, then microseconds), as strings would not. */
export function compareTs(a: string, b: string): number {
  const x = tsNumber(a)
  const y = tsNumber(b)
  return x < EXACT_TS && y < EXACT_TS ? x - y : secondsOf(a) - secondsOf(b) || microsOf(a) - microsOf(b)
}

/** Whether {@link tsNumber} of a `ts` is exact, so that two such numbers compare as the timestamps do. */
export const isExactTsNumber = (n: number): boolean => n < EXACT_TS

/** A valid `ts` as a number that orders like it (microseconds since the epoch); rounding (beyond the year 2255) only widens a range check. */
export function tsNumber(ts: string): number {
  return secondsOf(ts) * 1e6 + microsOf(ts)
}

/**
 * Epoch seconds (`created`, `updated`) in milliseconds; 0 or absent is "unknown". Slack writes a
 * number, but genuine exports also write the digits as a string (`"created": "1452837318"`, seen
 * in Zulip's and others' published fixtures): both are read.
 */
export function secondsMs(field: string, v: unknown): EpochMs | undefined {
  const n = typeof v === 'string' && /^\d{1,15}(\.\d+)?$/.test(v) ? Number(v) : v
  if (n === undefined || n === null || n === 0 || n === '') {
    return undefined
  }
  if (typeof n !== 'number' || !Number.isFinite(n) || n < 0 || n > 253_402_300_799) {
    throw new FieldProblem(field, `${field} is not a time in epoch seconds (a number or a string of digits): ${JSON.stringify(v)?.slice(0, 40)}`)
  }
  return Math.floor(n * 1000)
}
