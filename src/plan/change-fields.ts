/** Helpers of the per-entity change comparisons (`*-changes.ts`). */
import { isDeepStrictEqual } from 'node:util'

import type { UpdateKind, UpdatePolicy } from '../state/index.ts'
import type { ChangeIntent, NowSkipped, Payload } from './change-types.ts'

/** True when `field` differs between the two payloads (absent and undefined are the same). */
export function differs(before: Payload, after: Payload, field: string): boolean {
  return !isDeepStrictEqual(before[field], after[field])
}

/** The fields of `fields` that differ. */
export function changed(before: Payload, after: Payload, fields: readonly string[]): string[] {
  return fields.filter((f) => differs(before, after, f))
}

export function isSkipped(after: Payload | NowSkipped): after is NowSkipped {
  return typeof (after as NowSkipped).skipped === 'string'
}

/** The policy name of a skip reason (`policy:deletes: …` → `deletes`). */
export function skipPolicy(reason: string): string {
  return /^policy:([^:]+):/.exec(reason)?.[1] ?? ''
}

/** `{field: value}` of the fields present in `p`. */
export function present(p: Payload, fields: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const f of fields) {
    if (p[f] !== undefined) {
      out[f] = p[f]
    }
  }
  return out
}

/**
 * One `*.unchangeable` intent for fields the platform cannot change through its chat interface,
 * with `why` per field; none when no such field changed. Reported, or ignored under `ignore`.
 */
export function unchangeable(
  kind: UpdateKind,
  before: Payload,
  after: Payload,
  why: Readonly<Record<string, string>>,
  policy: UpdatePolicy,
): ChangeIntent[] {
  const fields = changed(before, after, Object.keys(why))
  if (fields.length === 0) {
    return []
  }
  return [
    {
      kind,
      body: present(after, fields),
      policy: policy === 'ignore' ? 'ignore' : 'report',
      reason: `not changeable on the platform: ${fields.map((f) => `${f} (${why[f] as string})`).join('; ')}`,
    },
  ]
}

/** A `*.unchangeable` intent with a reason of its own. */
export function cannot(kind: UpdateKind, reason: string, policy: UpdatePolicy, body: Record<string, unknown> = {}): ChangeIntent {
  return { kind, body, policy: policy === 'ignore' ? 'ignore' : 'report', reason: `not changeable on the platform: ${reason}` }
}
