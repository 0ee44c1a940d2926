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

const TS = /^(\d{1,12})(?:\.(\d{1,6}))?$/

/** True when `v` is a Slack message timestamp (`"1503435956.000247"`: seconds and microseconds). */
export const isTs = (v: unknown): v is string => typeof v === 'string' && TS.test(v)

/** A message timestamp (`ts`, `thread_ts`, `edited.ts`) in epoch milliseconds (microseconds dropped). */
export function tsMs(field: string, v: unknown): EpochMs {
  const m = typeof v === 'string' ? TS.exec(v) : null
  if (m === null) {
    throw new FieldProblem(field, `${field} is not a Slack timestamp ("seconds.micros"): ${JSON.stringify(v)?.slice(0, 40)}`)
  }
  return Number(m[1]) * 1000 + Math.floor(Number((m[2] ?? '0').padEnd(6, '0')) / 1000)
}

/** Compares two timestamps exactly (seconds, then microseconds), as strings would not. */
export function compareTs(a: string, b: string): number {
  const [as, am = ''] = a.split('.')
  const [bs, bm = ''] = b.split('.')
  return Number(as) - Number(bs) || Number(am.padEnd(6, '0')) - Number(bm.padEnd(6, '0'))
}

/** A `ts` as a number that orders like it; rounding (beyond the year 2255) only widens a range check. */
export function tsNumber(ts: string): number {
  const dot = ts.indexOf('.')
  if (dot < 0) {
    return Number(ts) * 1e6
  }
  const micros = ts.slice(dot + 1)
  return Number(ts.slice(0, dot)) * 1e6 + Number(micros) * 10 ** (6 - micros.length)
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
