/** Reading the fields of Twilio's JSON resources; a bad one throws {@link FieldProblem}. */
import type { EpochMs, JsonObject } from '../../../src/model/records.ts'
import { FieldProblem } from '../../rows/problems.ts'

export { FieldProblem }

export const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v)
export const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined)

export function required(field: string, v: unknown): string {
  const s = str(v)
  if (s === undefined) {
    throw new FieldProblem(field, `${field} is missing`)
  }
  return s
}

/** An ISO 8601 time as Twilio writes them (`2015-12-16T22:18:37Z`); absent or null: undefined. */
export function timeMs(field: string, v: unknown): EpochMs | undefined {
  if (v === undefined || v === null) {
    return undefined
  }
  const ms = typeof v === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(v) ? Date.parse(v) : Number.NaN
  if (!Number.isFinite(ms)) {
    throw new FieldProblem(field, `${field} is not an ISO 8601 time: ${JSON.stringify(v).slice(0, 40)}`)
  }
  return ms
}

/** `attributes`: a JSON object written as a string; kept when it is one, else as the string. */
export function attributesOf(v: unknown): JsonObject | undefined {
  if (typeof v !== 'string' || v === '' || v === '{}') {
    return undefined
  }
  try {
    const o = JSON.parse(v) as unknown
    return isObject(o) ? (Object.keys(o).length > 0 ? o : undefined) : { value: o }
  } catch {
    return { text: v }
  }
}
