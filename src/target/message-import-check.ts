/**
 * A cheap check of a `MessageImport` item that the mapping has just built, in place of
 * `MessageImport.safeParse` on the hot path (one or more items per message read). It answers true
 * only for an item that the zod schema accepts *and* whose keys already stand in the order zod's
 * output would give them, so the item itself can stand for what zod would return (same JSON, same
 * payload hash). Anything else — an invalid item, a key it does not know, keys in another order, an
 * item near the size limits — answers false, and the caller asks the zod schema, which stays the
 * authority: it gives the issue, or the reordered item. test/unit/target/message-import-check.test.ts holds
 * both to the same answers on a table of good and bad items.
 */
import { hasUnstorable } from './characters.ts'
import { isPlatformId, jsonSizeBound, LIMITS, MESSAGE_CATEGORIES, MESSAGE_TYPES, RECEIVER_TYPES } from './schemas.ts'

type Obj = Record<string, unknown>

const MAX_UNIX_SECONDS = 9_999_999_999
const ATTACHMENT_SIZE = /^\d{1,20}(\.\d{1,20})?$/

function isPlain(v: unknown): v is Obj {
  if (v === null || typeof v !== 'object') {
    return false
  }
  const proto = Object.getPrototypeOf(v)
  return proto === Object.prototype || proto === null
}

const id = (v: unknown) => typeof v === 'string' && isPlatformId(v)
const seconds = (v: unknown) => typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= MAX_UNIX_SECONDS
const text = (v: unknown, min: number, max: number) => typeof v === 'string' && v.length >= min && v.length <= max && !hasUnstorable(v)
const name = (v: unknown) => text(v, 1, LIMITS.NAME_MAX)
const url = (v: unknown) => text(v, 1, LIMITS.URL_MAX)
const someText = (v: unknown) => text(v, 1, Number.POSITIVE_INFINITY)

/** The schema's `Metadata`: a plain object whose keys and strings can all be stored. */
function storableJson(v: unknown): boolean {
  if (typeof v === 'string') {
    return !hasUnstorable(v)
  }
  if (v === null || typeof v !== 'object') {
    return true
  }
  if (Array.isArray(v)) {
    for (const e of v) {
      if (!storableJson(e)) {
        return false
      }
    }
    return true
  }
  for (const k in v) {
    if (hasUnstorable(k) || !storableJson((v as Obj)[k])) {
      return false
    }
  }
  return true
}
const metadata = (v: unknown) => isPlain(v) && storableJson(v)

function tags(v: unknown): boolean {
  if (!Array.isArray(v) || v.length > LIMITS.TAGS_MAX) {
    return false
  }
  for (const t of v) {
    if (!text(t, 1, LIMITS.TAG_MAX)) {
      return false
    }
  }
  return true
}

/** A strict object's fields in the schema's order, each with its check; `undefined` passes for every field but the required ones. */
interface Field {
  readonly check: (v: unknown) => boolean
  readonly required?: true
}

/**
 * True when `o` is a plain object with only the `fields` (in their order) and each passes. With
 * `rest`, keys beyond the fields are allowed after all of them (zod's catchall puts them there).
 */
function strictObject(
  o: unknown,
  fields: Readonly<Record<string, Field>>,
  order: ReadonlyMap<string, number>,
  rest?: (v: unknown) => boolean,
): o is Obj {
  if (!isPlain(o)) {
    return false
  }
  let last = -1
  let required = 0
  let inRest = false
  for (const k in o) {
    const at = order.get(k)
    const v = o[k]
    if (at === undefined) {
      if (rest === undefined || !rest(v) || hasUnstorable(k)) {
        return false
      }
      inRest = true
      continue
    }
    if (inRest || at <= last) {
      return false
    }
    last = at
    const f = fields[k] as Field
    if (v === undefined) {
      if (f.required) {
        return false
      }
      continue
    }
    if (!f.check(v)) {
      return false
    }
    if (f.required) {
      required++
    }
  }
  return required === requiredCount(fields)
}

const requiredCounts = new WeakMap<object, number>()
function requiredCount(fields: Readonly<Record<string, Field>>): number {
  let n = requiredCounts.get(fields)
  if (n === undefined) {
    n = Object.values(fields).filter((f) => f.required).length
    requiredCounts.set(fields, n)
  }
  return n
}

function orderOf(fields: Readonly<Record<string, Field>>): ReadonlyMap<string, number> {
  return new Map(Object.keys(fields).map((k, i) => [k, i]))
}

const ATTACHMENT: Record<string, Field> = {
  url: { check: url, required: true },
  name: { check: someText, required: true },
  mimeType: { check: someText, required: true },
  extension: { check: someText, required: true },
  size: { check: (v) => typeof v === 'string' && ATTACHMENT_SIZE.test(v) },
}
const ATTACHMENT_ORDER = orderOf(ATTACHMENT)

function attachments(v: unknown): boolean {
  if (!Array.isArray(v)) {
    return false
  }
  for (const a of v) {
    if (!strictObject(a, ATTACHMENT, ATTACHMENT_ORDER)) {
      return false
    }
  }
  return true
}

const MESSAGE_DATA: Record<string, Field> = {
  text: { check: (v) => text(v, 0, Number.POSITIVE_INFINITY) },
  attachments: { check: attachments },
  customData: { check: metadata },
  metadata: { check: metadata },
}
const MESSAGE_DATA_ORDER = orderOf(MESSAGE_DATA)
const dataRest = (v: unknown) => v !== undefined && storableJson(v)

const USER_DETAILS: Record<string, Field> = {
  uid: { check: id, required: true },
  name: { check: name, required: true },
  avatar: { check: url },
  link: { check: url },
  role: { check: id },
  createdAt: { check: seconds },
  lastActiveAt: { check: seconds },
  metadata: { check: metadata },
  tags: { check: tags },
  deactivatedAt: { check: seconds },
}
const USER_DETAILS_ORDER = orderOf(USER_DETAILS)
const userDetails = (v: unknown) => strictObject(v, USER_DETAILS, USER_DETAILS_ORDER)

function userDetailsByKey(v: unknown): boolean {
  if (!isPlain(v)) {
    return false
  }
  for (const k in v) {
    if (!userDetails(v[k])) {
      return false
    }
  }
  return true
}

const oneOf = (values: readonly string[]) => (v: unknown) => typeof v === 'string' && values.includes(v)

/** `MessageImport`'s fields; `receiverGroupDetails` and `receiverGroupOwnerDetails` are left to zod (the mapping never sends them). */
const MESSAGE: Record<string, Field> = {
  muid: { check: id, required: true },
  sender: { check: id, required: true },
  receiverType: { check: oneOf(RECEIVER_TYPES), required: true },
  receiver: { check: id, required: true },
  category: { check: oneOf(MESSAGE_CATEGORIES) },
  type: { check: (v) => typeof v === 'string' && v !== '' },
  data: { check: (v) => strictObject(v, MESSAGE_DATA, MESSAGE_DATA_ORDER, dataRest) },
  tags: { check: tags },
  sentAt: { check: seconds, required: true },
  deliveredAt: { check: seconds },
  readAt: { check: seconds },
  senderUserDetails: { check: userDetails },
  receiverUserDetails: { check: userDetails },
  mentionedUserDetails: { check: userDetailsByKey },
}
const MESSAGE_ORDER = orderOf(MESSAGE)

/** The schema's refinement: type by category, non-empty text, attachments, customData, and both size limits by bound. */
function refined(m: Obj): boolean {
  const category = (m.category ?? 'message') as string
  const type = (m.type ?? 'text') as string
  const data = m.data as Obj | undefined
  if (category === 'message') {
    if (!(MESSAGE_TYPES as readonly string[]).includes(type)) {
      return false
    }
    if (
      type === 'text' ? ((data?.text as string | undefined) ?? '').trim() === '' : ((data?.attachments as unknown[] | undefined)?.length ?? 0) === 0
    ) {
      return false
    }
  } else if (data?.customData === undefined) {
    return false
  }
  const small = Math.min(LIMITS.MESSAGE_DATA_BYTES_MAX, LIMITS.MESSAGE_PAYLOAD_CHARS_MAX)
  return jsonSizeBound(m, small) <= small
}

/**
 * True when `MessageImport.safeParse(item)` succeeds and returns an item of the same JSON; false
 * when it fails, or might not, or would reorder the keys (then ask the schema).
 */
export function isCanonicalMessageImport(item: unknown): boolean {
  return strictObject(item, MESSAGE, MESSAGE_ORDER) && refined(item)
}
