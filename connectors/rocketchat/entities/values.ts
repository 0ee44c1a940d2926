/**
 * Turning the values of a deserialised Rocket.Chat document into canonical values. Each helper
 * returns the value or throws a {@link FieldProblem} naming the field (dotted into embedded
 * documents, e.g. `u._id`), which the reader turns into a RowProblem.
 */
import { ObjectId } from 'bson'

import type { EpochMs } from '../../../src/model/records.ts'
import { FieldProblem, MAX_EPOCH_MS } from '../../sql/decode.ts'

export { compact, FieldProblem } from '../../sql/decode.ts'

export type Doc = Record<string, unknown>

const kindOf = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'an array' : v instanceof Date ? 'a date' : `a ${typeof v}`)

/** A Rocket.Chat id: a string (Meteor's 17-character ids, `GENERAL`, `rocket.cat`) or an ObjectId. */
export function optionalId(field: string, v: unknown): string | undefined {
  if (v === undefined || v === null || v === '') {
    return undefined
  }
  if (typeof v === 'string') {
    return v
  }
  if (v instanceof ObjectId) {
    return v.toHexString()
  }
  throw new FieldProblem(field, `is ${kindOf(v)}, not an id`)
}

export function requiredId(field: string, v: unknown): string {
  const id = optionalId(field, v)
  if (id === undefined) {
    throw new FieldProblem(field, 'is missing')
  }
  return id
}

/** The id of a document for reports: never throws (`?` when unreadable). */
export function legacyIdOfDoc(doc: Doc | undefined): string {
  try {
    return optionalId('_id', doc?._id) ?? '?'
  } catch {
    return '?'
  }
}

export function optionalText(field: string, v: unknown): string | undefined {
  if (v === undefined || v === null) {
    return undefined
  }
  if (typeof v !== 'string') {
    throw new FieldProblem(field, `is ${kindOf(v)}, not text`)
  }
  return v
}

/** A BSON date as epoch ms; `undefined` when absent. */
export function optionalTime(field: string, v: unknown): EpochMs | undefined {
  if (v === undefined || v === null) {
    return undefined
  }
  if (!(v instanceof Date)) {
    throw new FieldProblem(field, `is ${kindOf(v)}, not a date`)
  }
  const ms = v.getTime()
  if (!Number.isFinite(ms) || ms < 0 || ms > MAX_EPOCH_MS) {
    throw new FieldProblem(field, `date ${Number.isFinite(ms) ? ms : 'NaN'} ms is outside 1970–9999`)
  }
  return ms
}

export function requiredTime(field: string, v: unknown): EpochMs {
  const t = optionalTime(field, v)
  if (t === undefined) {
    throw new FieldProblem(field, 'is missing')
  }
  return t
}

/** An embedded document (`u`, `editedBy`, …); `undefined` when absent. */
export function optionalDoc(field: string, v: unknown): Doc | undefined {
  if (v === undefined || v === null) {
    return undefined
  }
  if (typeof v !== 'object' || Array.isArray(v) || v instanceof Date || v instanceof ObjectId) {
    throw new FieldProblem(field, `is ${kindOf(v)}, not an embedded document`)
  }
  return v as Doc
}

export function optionalArray(field: string, v: unknown): unknown[] | undefined {
  if (v === undefined || v === null) {
    return undefined
  }
  if (!Array.isArray(v)) {
    throw new FieldProblem(field, `is ${kindOf(v)}, not an array`)
  }
  return v
}

/** A list of strings (`roles`, `uids`, `usernames`); entries that are not text are a problem. */
export function stringList(field: string, v: unknown): string[] {
  const list = optionalArray(field, v) ?? []
  return list.map((x, i) => {
    if (typeof x !== 'string') {
      throw new FieldProblem(`${field}.${i}`, `is ${kindOf(x)}, not text`)
    }
    return x
  })
}

/** A user reference `{_id, username, name}` (`u` of messages, subscriptions and rooms). */
export function userRef(field: string, v: unknown, required: boolean): { id: string; username?: string } | undefined {
  const ref = optionalDoc(field, v)
  if (ref === undefined) {
    if (required) {
      throw new FieldProblem(field, 'is missing: no user')
    }
    return undefined
  }
  const id = requiredId(`${field}._id`, ref._id)
  const username = optionalText(`${field}.username`, ref.username)
  return username ? { id, username } : { id }
}

/** Values made JSON-safe for metadata: dates as ISO text, ObjectIds as hex, binary left out. */
export function jsonSafe(v: unknown): unknown {
  if (v instanceof Date) {
    return Number.isFinite(v.getTime()) ? v.toISOString() : null
  }
  if (v instanceof ObjectId) {
    return v.toHexString()
  }
  if (Array.isArray(v)) {
    return v.map(jsonSafe)
  }
  if (v !== null && typeof v === 'object') {
    if ((v as { _bsontype?: unknown })._bsontype !== undefined) {
      return undefined
    }
    const out: Record<string, unknown> = {}
    for (const [k, x] of Object.entries(v)) {
      const y = jsonSafe(x)
      if (y !== undefined) {
        out[k] = y
      }
    }
    return out
  }
  return typeof v === 'bigint' ? Number(v) : v
}
