/**
 * Per-item validation of data-import items, without the database: the documented field rules
 * (via the zod schemas of `target/schemas.ts`, so the sandbox and the client agree on them) plus
 * the specific error codes the error guide documents for messages. Each item is checked in a
 * fixed order; the first failure is its result.
 *
 * Documented: key = id, ids lowercased then alpha-dash ≤ 100, names ≤ 100, tags, URL lengths,
 * data ≤ 10 KB, payload ≤ 65,536 characters, the message codes of facts §4.2, retention message.
 * Assumed (see README): the code of each refusal the docs name no code for, integer timestamps
 * only, unknown fields refused, muid not lowercased, U+0000 and unpaired surrogates refused in
 * every key and string of an item (the platform answers 500 to them: the sandbox is stricter).
 */
import type { z } from 'zod'

import { hasUnstorable, printable, unstorableReason } from '../target/characters.ts'
import { GroupImport, jsonBytes, LIMITS, MemberImport, MESSAGE_CATEGORIES, MESSAGE_TYPES, MessageImport, UserImport } from '../target/schemas.ts'
import type { AppSettings } from './app-settings.ts'
import { isPlainObject, zodDetails } from './http-kit.ts'

/** The error of one failed item: `data.<key>.error` (its shape is gap 1; this one is the standard error object). */
export interface ItemError {
  readonly code: string
  readonly message: string
  readonly devMessage: string
  readonly details?: Record<string, string[]>
}

/** An item that passed (normalised: ids lowercased), or its error. */
export type Checked<T> = { readonly ok: true; readonly item: T } | { readonly ok: false; readonly error: ItemError }

/** An item error whose devMessage repeats the message. */
export function itemError(code: string, message: string, details?: Record<string, string[]>): ItemError {
  return { code, message, devMessage: message, ...(details ? { details } : {}) }
}

function fail(code: string, message: string, details?: Record<string, string[]>): { ok: false; error: ItemError } {
  return { ok: false, error: itemError(code, message, details) }
}

function badField(field: string, message: string): { ok: false; error: ItemError } {
  return fail('ERR_BAD_REQUEST', `${field} ${message}.`, { [field]: [message] })
}

function fromZod(error: z.ZodError): { ok: false; error: ItemError } {
  const details = zodDetails(error.issues)
  const first = Object.entries(details)[0]
  return fail('ERR_BAD_REQUEST', first ? `${first[0]}: ${first[1][0]}` : 'The item is invalid.', details)
}

/** The path and reason of the first key or string in `v` that cannot be stored, if any. */
function firstUnstorable(v: unknown, path: string): { path: string; reason: string } | undefined {
  if (typeof v === 'string') {
    return hasUnstorable(v) ? { path, reason: unstorableReason(v) as string } : undefined
  }
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const bad = firstUnstorable(v[i], `${path}.${i}`)
      if (bad) {
        return bad
      }
    }
    return undefined
  }
  if (!isPlainObject(v)) {
    return undefined
  }
  for (const [k, child] of Object.entries(v)) {
    const at = path === '' ? printable(k) : `${path}.${printable(k)}`
    if (hasUnstorable(k)) {
      return { path: at, reason: `key ${unstorableReason(k)}` }
    }
    const bad = firstUnstorable(child, at)
    if (bad) {
      return bad
    }
  }
  return undefined
}

/** Assumed: an item holding U+0000 or an unpaired surrogate anywhere is refused, naming the field. */
function unstorable(key: string, raw: unknown): { ok: false; error: ItemError } | undefined {
  const bad = hasUnstorable(key) ? { path: '(key)', reason: unstorableReason(key) as string } : firstUnstorable(raw, '')
  return bad === undefined ? undefined : badField(bad.path, bad.reason)
}

/** Documented: uids and guids are lowercased by the platform before they are checked. */
function lower(value: unknown): unknown {
  return typeof value === 'string' ? value.toLowerCase() : value
}

function lowerFields(value: unknown, fields: readonly string[]): unknown {
  if (!isPlainObject(value)) {
    return value
  }
  const out: Record<string, unknown> = { ...value }
  for (const f of fields) {
    if (f in out) {
      out[f] = lower(out[f])
    }
  }
  return out
}

const USER_ID_FIELDS = ['uid'] as const
const GROUP_ID_FIELDS = ['guid', 'owner'] as const

function metadataTooBig(metadata: unknown): boolean {
  return metadata !== undefined && jsonBytes(metadata) > LIMITS.METADATA_BYTES_MAX
}

/** The documented metadata limit of users and groups (5 KB), for the item and its nested details. */
function checkMetadata(obj: Record<string, unknown>, paths: readonly string[]): { ok: false; error: ItemError } | undefined {
  for (const path of paths) {
    const parts = path.split('.')
    let v: unknown = obj
    for (const p of parts) {
      v = isPlainObject(v) ? v[p] : undefined
    }
    if (metadataTooBig(v)) {
      return badField(path, `must be at most ${LIMITS.METADATA_BYTES_MAX} bytes of JSON`)
    }
  }
  return undefined
}

function idMismatch(key: string, raw: Record<string, unknown>, field: string): { ok: false; error: ItemError } | undefined {
  const id = raw[field]
  if (typeof id === 'string' && id !== key) {
    return fail('ERR_BAD_REQUEST', `The map key ${JSON.stringify(key)} must equal the ${field} ${JSON.stringify(id)}.`, {
      [field]: [`must equal the map key ${JSON.stringify(key)}`],
    })
  }
  return undefined
}

/** One item of `data_import/users`; the role must be `default` or one of `settings.roles`. */
export function checkUser(key: string, raw: unknown, settings: AppSettings): Checked<UserImport> {
  if (!isPlainObject(raw)) {
    return badField('(item)', 'must be an object')
  }
  const refused = unstorable(key, raw)
  if (refused) {
    return refused
  }
  const mismatch = idMismatch(key, raw, 'uid')
  if (mismatch) {
    return mismatch
  }
  const parsed = UserImport.safeParse(lowerFields(raw, USER_ID_FIELDS))
  if (!parsed.success) {
    return fromZod(parsed.error)
  }
  const big = checkMetadata(parsed.data, ['metadata'])
  if (big) {
    return big
  }
  const role = parsed.data.role
  if (role !== undefined && role !== 'default' && !settings.roles.includes(role)) {
    return fail('ERR_ROLE_NOT_FOUND', `The role ${role} does not exist in this app.`, { role: ['does not exist'] })
  }
  return { ok: true, item: parsed.data }
}

/** One item of `data_import/groups`. */
export function checkGroup(key: string, raw: unknown): Checked<GroupImport> {
  if (!isPlainObject(raw)) {
    return badField('(item)', 'must be an object')
  }
  const refused = unstorable(key, raw)
  if (refused) {
    return refused
  }
  const mismatch = idMismatch(key, raw, 'guid')
  if (mismatch) {
    return mismatch
  }
  const normalized = lowerFields(raw, GROUP_ID_FIELDS) as Record<string, unknown>
  if ('groupOwnerDetails' in normalized) {
    normalized.groupOwnerDetails = lowerFields(normalized.groupOwnerDetails, USER_ID_FIELDS)
  }
  if (normalized.type === 'password' && (normalized.password === undefined || normalized.password === '')) {
    return fail('ERR_EMPTY_GROUP_PASS', 'A password group needs a password.', { password: ['is required for a password group'] })
  }
  const parsed = GroupImport.safeParse(normalized)
  if (!parsed.success) {
    return fromZod(parsed.error)
  }
  const big = checkMetadata(parsed.data, ['metadata', 'groupOwnerDetails.metadata'])
  if (big) {
    return big
  }
  return { ok: true, item: parsed.data }
}

/** One item of `data_import/members` (the joinedAt rule needs the group, so the handler checks it). */
export function checkMember(key: string, raw: unknown): Checked<MemberImport> {
  if (!isPlainObject(raw)) {
    return badField('(item)', 'must be an object')
  }
  const refused = unstorable(key, raw)
  if (refused) {
    return refused
  }
  const mismatch = idMismatch(key, raw, 'memberId')
  if (mismatch) {
    return mismatch
  }
  const normalized = lowerFields(raw, ['memberId', 'guid', 'uid']) as Record<string, unknown>
  if ('groupDetails' in normalized) {
    normalized.groupDetails = lowerFields(normalized.groupDetails, GROUP_ID_FIELDS)
  }
  if ('userDetails' in normalized) {
    normalized.userDetails = lowerFields(normalized.userDetails, USER_ID_FIELDS)
  }
  const parsed = MemberImport.safeParse(normalized)
  if (!parsed.success) {
    return fromZod(parsed.error)
  }
  const big = checkMetadata(parsed.data, ['groupDetails.metadata', 'userDetails.metadata'])
  if (big) {
    return big
  }
  return { ok: true, item: parsed.data }
}

const MEDIA_TYPES: readonly string[] = MESSAGE_TYPES.filter((t) => t !== 'text')

/** The documented retention message (facts §1.7) for the default window; other windows say their length. */
export function retentionMessage(retentionDays: number): string {
  return retentionDays === 183 ? 'Messages older than 6 months cannot be imported' : `Messages older than ${retentionDays} days cannot be imported`
}

/** One item of `data_import/messages`, including the retention window and no future sentAt. */
export function checkMessage(key: string, raw: unknown, settings: AppSettings, nowSeconds: number): Checked<MessageImport> {
  if (!isPlainObject(raw)) {
    return badField('(item)', 'must be an object')
  }
  const refused = unstorable(key, raw)
  if (refused) {
    return refused
  }
  const mismatch = idMismatch(key, raw, 'muid')
  if (mismatch) {
    return mismatch
  }
  const { receiverType, receiver, category = 'message', data } = raw
  if (receiverType !== undefined && receiverType !== 'user' && receiverType !== 'group') {
    return fail('ERR_INVALID_RECEIVER_TYPE', `receiverType must be user or group, got ${JSON.stringify(receiverType)}.`)
  }
  if (receiver === undefined || receiver === null || receiver === '') {
    return fail('ERR_EMPTY_RECEIVER', 'The receiver is missing.')
  }
  if (category === '' || category === null) {
    return fail('ERR_EMPTY_MESSAGE_CATEGORY', 'The category is empty.')
  }
  if (typeof category !== 'string' || !(MESSAGE_CATEGORIES as readonly string[]).includes(category)) {
    return fail('ERR_INVALID_MESSAGE_CATEGORY', `category must be ${MESSAGE_CATEGORIES.join(' or ')}, got ${JSON.stringify(category)}.`)
  }
  // Documented as optional; a message without a type is taken as text (assumed).
  const type = raw.type ?? (category === 'message' ? 'text' : undefined)
  if (type === undefined || type === '' || type === null) {
    return fail('ERR_EMPTY_MESSAGE_TYPE', 'The type is empty.')
  }
  if (typeof type !== 'string' || (category === 'message' && !(MESSAGE_TYPES as readonly string[]).includes(type))) {
    return fail('ERR_INVALID_MESSAGE_TYPE', `A message of category ${category} cannot have the type ${JSON.stringify(type)}.`)
  }
  if (data !== undefined && !isPlainObject(data)) {
    return fail('ERR_INVALID_MESSAGE_DATA', 'data must be an object.')
  }
  if (data !== undefined && jsonBytes(data) > LIMITS.MESSAGE_DATA_BYTES_MAX) {
    return fail('ERR_INVALID_MESSAGE_DATA', `data is ${jsonBytes(data)} bytes of JSON; at most ${LIMITS.MESSAGE_DATA_BYTES_MAX} are allowed.`)
  }
  const text = data?.text
  if (text !== undefined && typeof text !== 'string') {
    return fail('ERR_INVALID_MESSAGE_TEXT', 'data.text must be a string.')
  }
  if (category === 'message' && type === 'text' && (text === undefined || text.trim() === '')) {
    return fail('ERR_EMPTY_MESSAGE_TEXT', 'A text message needs a non-empty data.text.')
  }
  if (category === 'message' && MEDIA_TYPES.includes(type)) {
    const attachments = data?.attachments
    if (!Array.isArray(attachments) || attachments.length === 0) {
      return fail('ERR_INVALID_MEDIA_MESSAGE', `A ${type} message needs data.attachments with at least one attachment.`)
    }
  }
  if (category === 'custom') {
    if (data?.customData === undefined) {
      return fail('ERR_EMPTY_CUSTOM_DATA', 'A custom message needs data.customData.')
    }
    if (!isPlainObject(data.customData)) {
      return fail('ERR_INVALID_CUSTOM_DATA', 'data.customData must be an object.')
    }
  }
  if (data?.metadata !== undefined && !isPlainObject(data.metadata)) {
    return fail('ERR_INVALID_METADATA', 'data.metadata must be an object.')
  }
  const size = JSON.stringify(raw).length
  if (size > LIMITS.MESSAGE_PAYLOAD_CHARS_MAX) {
    return fail('ERR_BAD_REQUEST', `The message payload is ${size} characters; at most ${LIMITS.MESSAGE_PAYLOAD_CHARS_MAX} are allowed.`, {
      '(item)': [`must be at most ${LIMITS.MESSAGE_PAYLOAD_CHARS_MAX} characters of JSON`],
    })
  }
  const normalized = lowerFields(raw, ['sender', 'receiver']) as Record<string, unknown>
  for (const f of ['senderUserDetails', 'receiverUserDetails', 'receiverGroupOwnerDetails']) {
    if (f in normalized) {
      normalized[f] = lowerFields(normalized[f], USER_ID_FIELDS)
    }
  }
  if ('receiverGroupDetails' in normalized) {
    normalized.receiverGroupDetails = lowerFields(normalized.receiverGroupDetails, GROUP_ID_FIELDS)
  }
  if (isPlainObject(normalized.mentionedUserDetails)) {
    normalized.mentionedUserDetails = Object.fromEntries(
      Object.entries(normalized.mentionedUserDetails).map(([k, v]) => [k, lowerFields(v, USER_ID_FIELDS)]),
    )
  }
  const parsed = MessageImport.safeParse(normalized)
  if (!parsed.success) {
    return fromZod(parsed.error)
  }
  const m = parsed.data
  const oldest = nowSeconds - Math.floor(settings.retentionDays * 86_400)
  if (m.sentAt < oldest) {
    return fail('ERR_BAD_REQUEST', retentionMessage(settings.retentionDays), {
      sentAt: [`must be at or after ${oldest} (now minus ${settings.retentionDays} days)`],
    })
  }
  if (m.sentAt > nowSeconds) {
    return fail('ERR_BAD_REQUEST', 'Messages cannot be imported with a sentAt in the future.', { sentAt: [`must be at most ${nowSeconds} (now)`] })
  }
  return { ok: true, item: m }
}
