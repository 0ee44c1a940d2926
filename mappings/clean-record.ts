/**
 * `policies.text.invalidCharacters`: every string of a legacy record, nested JSON keys and values
 * included, is checked once before the record is mapped, so nothing the platform or the ledger
 * cannot store reaches a payload, a reason or a lookup. Legacy ids (the record's and the ones it
 * refers to) are never changed, whatever the policy: two ids differing only by such a character
 * would become one. @internal
 */
import type { LegacyEntity, LegacyRecordOf } from '../src/model/index.ts'
import { hasUnstorable, printable, stripUnstorable, unstorableReason } from '../src/target/characters.ts'
import { type Outcomes, Rejection } from './common.ts'
import type { MappingContext } from './types.ts'

/** Top-level fields that hold legacy ids, per entity (lists of ids: every element). */
const ID_FIELDS: Record<LegacyEntity, ReadonlySet<string>> = {
  users: new Set(['id']),
  groups: new Set(['id', 'ownerId']),
  members: new Set(['groupId', 'userId']),
  messages: new Set(['id', 'senderId', 'receiverId', 'threadParentId', 'mentions']),
}

/** A field path, built only when a bad character is found. */
interface Path {
  readonly up: Path | undefined
  readonly key: string
}

function pathText(p: Path): string {
  return p.up === undefined ? p.key : `${pathText(p.up)}.${p.key}`
}

function rootOf(p: Path): string {
  return p.up === undefined ? p.key : rootOf(p.up)
}

/** Legacy ids nested in a message: `reactions.N.userId`, and the values of `mentionHandles`. */
function isIdPath(entity: LegacyEntity, p: Path): boolean {
  const root = rootOf(p)
  if (ID_FIELDS[entity].has(root)) {
    return true
  }
  if (entity !== 'messages') {
    return false
  }
  return (root === 'reactions' && p.key === 'userId') || (root === 'mentionHandles' && p.up?.up === undefined)
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) {
    return false
  }
  const proto = Object.getPrototypeOf(v)
  return proto === Object.prototype || proto === null
}

/** True when any string in `v` (object keys included) cannot be stored. The fast path: no allocation. */
function anyUnstorable(v: unknown): boolean {
  if (typeof v === 'string') {
    return hasUnstorable(v)
  }
  if (Array.isArray(v)) {
    return v.some(anyUnstorable)
  }
  if (isPlainObject(v)) {
    for (const k in v) {
      if (hasUnstorable(k) || anyUnstorable(v[k])) {
        return true
      }
    }
  }
  return false
}

class Cleaner {
  readonly entity: LegacyEntity
  readonly strip: boolean
  /** Top-level fields something was stripped from. */
  readonly stripped = new Set<string>()
  constructor(entity: LegacyEntity, strip: boolean) {
    this.entity = entity
    this.strip = strip
  }

  /** `v` cleaned (the same reference when nothing changed), or a {@link Rejection}. */
  value(v: unknown, p: Path): unknown {
    if (typeof v === 'string') {
      return this.text(v, p)
    }
    if (Array.isArray(v)) {
      let copy: unknown[] | undefined
      for (let i = 0; i < v.length; i++) {
        const c = this.value(v[i], { up: p, key: String(i) })
        if (c !== v[i]) {
          ;(copy ??= v.slice())[i] = c
        }
      }
      return copy ?? v
    }
    if (isPlainObject(v)) {
      return this.object(v, p)
    }
    return v
  }

  object(o: Record<string, unknown>, p: Path | undefined): Record<string, unknown> {
    if (!anyUnstorable(o)) {
      return o
    }
    const out: Record<string, unknown> = {}
    for (const k of Object.keys(o)) {
      let key = k
      if (hasUnstorable(k)) {
        const at = p === undefined ? printable(k) : `${pathText(p)}.${printable(k)}`
        if (!this.strip) {
          throw new Rejection(at, `key ${unstorableReason(k)}`, 'text')
        }
        key = stripUnstorable(k).text
        if (Object.hasOwn(o, key) || Object.hasOwn(out, key)) {
          throw new Rejection(at, `key ${unstorableReason(k)}, and without it it would replace the key ${JSON.stringify(key)}`, 'text')
        }
        this.stripped.add(p === undefined ? printable(key) : rootOf(p))
      }
      const child: Path = { up: p, key }
      out[key] = this.value(o[k], child)
    }
    return out
  }

  text(s: string, p: Path): string {
    if (!hasUnstorable(s)) {
      return s
    }
    const reason = unstorableReason(s) as string
    if (isIdPath(this.entity, p)) {
      throw new Rejection(pathText(p), `legacy id ${reason} (an id is never changed)`)
    }
    if (!this.strip) {
      throw new Rejection(pathText(p), reason, 'text')
    }
    this.stripped.add(rootOf(p))
    return stripUnstorable(s).text
  }
}

/**
 * True when any value of the record cannot be stored. Its own keys are the model's field names
 * (`LegacyMessage` and the others), never legacy data, so only its values are walked; the keys of
 * the objects nested in it (metadata, custom fields) come from the legacy system and are checked.
 */
function anyUnstorableValue(record: Record<string, unknown>): boolean {
  for (const k in record) {
    if (anyUnstorable(record[k])) {
      return true
    }
  }
  return false
}

/**
 * The record with `policies.text.invalidCharacters` applied: the same object when every string can
 * be stored; under `strip`, a copy without the bad characters (`text: stripped:<field>` counted
 * once per field); under `quarantine`, or for a legacy id, a {@link Rejection} naming the field.
 */
export function cleanRecord<E extends LegacyEntity>(entity: E, record: LegacyRecordOf[E], ctx: MappingContext, out: Outcomes): LegacyRecordOf[E] {
  if (!anyUnstorableValue(record as unknown as Record<string, unknown>)) {
    return record
  }
  const cleaner = new Cleaner(entity, ctx.policies.text.invalidCharacters === 'strip')
  const cleaned = cleaner.object(record as unknown as Record<string, unknown>, undefined)
  for (const field of cleaner.stripped) {
    out.add('text', `stripped:${field}`)
  }
  return cleaned as unknown as LegacyRecordOf[E]
}
