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

/**
 * A platform id (uid, guid, muid, role). Checked character by character each time: a set of the ids
 * found valid cost about twice as much inside a 1M-post plan (4.8M look-ups of senders, receivers,
 * groups and users).
 */
export const platformId = (v: unknown) => typeof v === 'string' && isPlatformId(v)

export const seconds = (v: unknown) => typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= MAX_UNIX_SECONDS
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
 * A strict object's fields compiled once: their keys in order, checks and required flags side by
 * side in arrays (an item is checked by index, not by a keyed lookup per key), and how many are
 * required.
 */
interface Shape {
  readonly keys: readonly string[]
  readonly checks: readonly ((v: unknown) => boolean)[]
  readonly required: readonly boolean[]
  readonly requiredCount: number
  readonly known: ReadonlySet<string>
}

export function shapeOf(fields: Readonly<Record<string, Field>>): Shape {
  const list = Object.values(fields)
  return {
    keys: Object.keys(fields),
    checks: list.map((f) => f.check),
    required: list.map((f) => f.required === true),
    requiredCount: list.filter((f) => f.required).length,
    known: new Set(Object.keys(fields)),
  }
}

/**
 * True when `o` is a plain object with only the shape's fields (in their order) and each passes.
 * With `rest`, keys beyond the fields are allowed after all of them (zod's catchall puts them
 * there). The keys are matched by a scan forward from the last one matched: an item in the
 * schema's order (the only one that passes) meets each of its keys on the way.
 */
export function strictObject(o: unknown, shape: Shape, rest?: (v: unknown) => boolean): o is Obj {
  if (!isPlain(o)) {
    return false
  }
  const { keys, checks, required: isRequired } = shape
  let next = 0
  let required = 0
  let inRest = false
  for (const k in o) {
    const v = o[k]
    let at = next
    while (at < keys.length && keys[at] !== k) {
      at++
    }
    if (at === keys.length) {
      // Not ahead: a known key out of order, or one beyond the fields.
      if (shape.known.has(k) || rest === undefined || !rest(v) || hasUnstorable(k)) {
        return false
      }
      inRest = true
      continue
    }
    if (inRest) {
      return false
    }
    next = at + 1
    if (v === undefined) {
      if (isRequired[at]) {
        return false
      }
      continue
    }
    if (!(checks[at] as (v: unknown) => boolean)(v)) {
      return false
    }
    if (isRequired[at]) {
      required++
    }
  }
  return required === shape.requiredCount
}

const ATTACHMENT: Record<string, Field> = {
  url: { check: url, required: true },
  name: { check: someText, required: true },
  mimeType: { check: someText, required: true },
  extension: { check: someText, required: true },
  size: { check: (v) => typeof v === 'string' && ATTACHMENT_SIZE.test(v) },
}
const ATTACHMENT_SHAPE = shapeOf(ATTACHMENT)

function attachments(v: unknown): boolean {
  if (!Array.isArray(v)) {
    return false
  }
  for (const a of v) {
    if (!strictObject(a, ATTACHMENT_SHAPE)) {
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
const MESSAGE_DATA_SHAPE = shapeOf(MESSAGE_DATA)
const dataRest = (v: unknown) => v !== undefined && storableJson(v)

const USER_DETAILS: Record<string, Field> = {
  uid: { check: platformId, required: true },
  name: { check: name, required: true },
  avatar: { check: url },
  link: { check: url },
  role: { check: platformId },
  createdAt: { check: seconds },
  lastActiveAt: { check: seconds },
  metadata: { check: metadata },
  tags: { check: tags },
  deactivatedAt: { check: seconds },
}
const USER_DETAILS_SHAPE = shapeOf(USER_DETAILS)
const userDetails = (v: unknown) => strictObject(v, USER_DETAILS_SHAPE)

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

export const oneOf = (values: readonly string[]) => (v: unknown) => typeof v === 'string' && values.includes(v)

/** `MessageImport`'s fields; `receiverGroupDetails` and `receiverGroupOwnerDetails` are left to zod (the mapping never sends them). */
const MESSAGE: Record<string, Field> = {
  muid: { check: platformId, required: true },
  sender: { check: platformId, required: true },
  receiverType: { check: oneOf(RECEIVER_TYPES), required: true },
  receiver: { check: platformId, required: true },
  category: { check: oneOf(MESSAGE_CATEGORIES) },
  type: { check: (v) => typeof v === 'string' && v !== '' },
  data: { check: (v) => strictObject(v, MESSAGE_DATA_SHAPE, dataRest) },
  tags: { check: tags },
  sentAt: { check: seconds, required: true },
  deliveredAt: { check: seconds },
  readAt: { check: seconds },
  senderUserDetails: { check: userDetails },
  receiverUserDetails: { check: userDetails },
  mentionedUserDetails: { check: userDetailsByKey },
}
const MESSAGE_SHAPE = shapeOf(MESSAGE)

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
  return strictObject(item, MESSAGE_SHAPE) && refined(item)
}
