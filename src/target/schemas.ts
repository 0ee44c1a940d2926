/**
 * zod schemas of every request and response body of the platform's management, chat and
 * data-import interfaces, and of webhook deliveries.
 *
 * Provenance: fields and limits come from `shared/docs/target-platform-facts.md` (the platform's
 * published OpenAPI and docs pages). Where a shape is *assumed* rather than documented, the
 * comment says so. Request schemas are strict about what we send (we never send what the platform
 * would refuse); response schemas are lenient about what we receive (unknown fields pass, and the
 * documented variants of the same response are all accepted).
 */
import { z } from 'zod'

import { LEGACY_ENTITIES, type LegacyEntity } from '../model/index.ts'
import { hasUnstorable } from './characters.ts'

// ─── limits (documented: articles/properties-and-constraints.mdx) ────────────────────────────────

export const LIMITS = {
  /** uid / guid: at most 100 characters, alpha-dash, lowercased by the platform. */
  ID_MAX: 100,
  NAME_MAX: 100,
  URL_MAX: 3000,
  TAGS_MAX: 25,
  TAG_MAX: 100,
  GROUP_PASSWORD_MAX: 100,
  /** metadata of users and groups: at most 5 KB. */
  METADATA_BYTES_MAX: 5 * 1024,
  /** A message's `data` object: at most 10 KB. */
  MESSAGE_DATA_BYTES_MAX: 10 * 1024,
  /** A message's whole JSON payload: at most 65,536 characters. */
  MESSAGE_PAYLOAD_CHARS_MAX: 65_536,
  /** Groups one user can be a member of ("Maximum groups per user | 2,000"). */
  GROUPS_PER_USER_MAX: 2000,
  /** Members of one group, without receipts and typing indicators ("Maximum members per group … | 100,000"). */
  MEMBERS_PER_GROUP_MAX: 100_000,
  /** Items per data-import request. */
  IMPORT_ITEMS_MAX: 50,
  /** Data-import requests per minute per app. */
  IMPORT_REQUESTS_PER_MINUTE: 60,
  /** perPage of the page-numbered list endpoints (default 100). */
  PER_PAGE_MAX: 1000,
  /** limit of the cursor-paged message list (default 10). */
  MESSAGES_LIMIT_MAX: 1000,
} as const

/** Documented id alphabet after the platform lowercases it. */
export const ID_PATTERN = /^[a-z0-9_-]+$/

/** True for the UTF-16 unit of a character of {@link ID_PATTERN}: `a-z`, `0-9`, `_`, `-`. */
const isIdUnit = (u: number): boolean => (u >= 97 && u <= 122) || (u >= 48 && u <= 57) || u === 95 || u === 45

/**
 * True when the platform takes `id` unchanged: 1–100 characters of lowercase alpha-dash
 * ({@link ID_PATTERN} with the length limit). A loop rather than the pattern: it runs several times
 * a message (muid, sender, receiver, mentions), and on ids this short a regular expression's call
 * costs about twice the loop.
 */
export function isPlatformId(id: string): boolean {
  const n = id.length
  if (n === 0 || n > LIMITS.ID_MAX) {
    return false
  }
  for (let i = 0; i < n; i++) {
    if (!isIdUnit(id.charCodeAt(i))) {
      return false
    }
  }
  return true
}

/** How a rejected leaf value reads in an issue: `"Bob"`, `5`, `undefined`, `an object`. */
function shown(v: unknown): string {
  if (typeof v === 'string') {
    return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v)
  }
  if (typeof v === 'function') {
    return 'a function'
  }
  if (v === null || typeof v !== 'object') {
    return String(v)
  }
  return Array.isArray(v) ? 'an array' : 'an object'
}

/**
 * A leaf schema as one predicate. `z.string().regex()` and `z.number().int().min().max()` run each
 * check through zod's check pipeline; on the hot path (several ids and timestamps per message) one
 * predicate is cheaper (MessageImport.safeParse of a typical item: 6.2 → 4.4 µs), with the same
 * issue path and a message naming the rule and the value.
 */
function leaf<T>(test: (v: unknown) => boolean, rule: string) {
  return z.custom<T>(test, {
    error: (issue) => (issue.input === undefined ? `required: ${rule}` : `must be ${rule}, got ${shown(issue.input)}`),
  })
}

export const PlatformId = leaf<string>(
  (v) => typeof v === 'string' && isPlatformId(v),
  `1–${LIMITS.ID_MAX} characters of lowercase alpha-dash (a-z, 0-9, -, _)`,
)

const MAX_UNIX_SECONDS = 9_999_999_999
/** 10-digit UNIX seconds, as every import timestamp is documented. */
export const UnixSeconds = leaf<number>(
  (v) => typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= MAX_UNIX_SECONDS,
  `an integer of UNIX seconds, 0–${MAX_UNIX_SECONDS}`,
)

/**
 * Assumed (no document names it): the platform cannot store U+0000 or an unpaired surrogate in any
 * text (it answers 500), so every string of an item is refused with one (`characters.ts`).
 */
const STORABLE = 'without U+0000 or unpaired surrogates'

/** A string of `min`–`max` UTF-16 units the platform can store. */
export function text(min: number, max: number) {
  const rule = max === Number.POSITIVE_INFINITY ? `a string of at least ${min} characters` : `a string of ${min}–${max} characters`
  return leaf<string>((v) => typeof v === 'string' && v.length >= min && v.length <= max && !hasUnstorable(v), `${rule} ${STORABLE}`)
}

/** The name of a user, a group or an app. */
export const Name = text(1, LIMITS.NAME_MAX)

export const Url = text(1, LIMITS.URL_MAX)
export const Tags = z.array(text(1, LIMITS.TAG_MAX)).max(LIMITS.TAGS_MAX)
/** True for the prototype of an object literal or of `Object.create(null)` (not arrays, dates, maps). */
function isPlainProto(proto: unknown): boolean {
  return proto === Object.prototype || proto === null
}

/**
 * A JSON object. One check, and the object is passed through rather than copied key by key (what
 * `z.record(z.string(), z.unknown())` would do: the same acceptance, at several times the cost per item).
 */
export const Metadata = z.custom<Record<string, unknown>>(
  (v) => v !== null && typeof v === 'object' && isPlainProto(Object.getPrototypeOf(v)) && storableJson(v),
  {
    error: (issue) => {
      const v = issue.input
      if (v === undefined) {
        return 'required: a JSON object'
      }
      if (v === null || typeof v !== 'object' || !isPlainProto(Object.getPrototypeOf(v))) {
        return `must be a JSON object, got ${shown(v)}`
      }
      return `must be a JSON object whose keys and strings are ${STORABLE}`
    },
  },
)

/** True when every key and string in `v` can be stored. */
function storableJson(v: unknown): boolean {
  if (typeof v === 'string') {
    return !hasUnstorable(v)
  }
  if (v === null || typeof v !== 'object') {
    return true
  }
  if (Array.isArray(v)) {
    return v.every(storableJson)
  }
  for (const k in v) {
    if (hasUnstorable(k) || !storableJson((v as Record<string, unknown>)[k])) {
      return false
    }
  }
  return true
}

// ─── data import: request items (documented: data-import-apis.json) ──────────────────────────────

export const UserDetails = z
  .object({
    uid: PlatformId,
    name: Name,
    avatar: Url.optional(),
    link: Url.optional(),
    role: PlatformId.optional(),
    createdAt: UnixSeconds.optional(),
    lastActiveAt: UnixSeconds.optional(),
    metadata: Metadata.optional(),
    tags: Tags.optional(),
    deactivatedAt: UnixSeconds.optional(),
  })
  .strict()
export type UserDetails = z.infer<typeof UserDetails>

/** One item of `POST /data_import/users`. */
export const UserImport = UserDetails
export type UserImport = z.infer<typeof UserImport>

export const GROUP_TYPES = ['public', 'private', 'password'] as const
export type GroupType = (typeof GROUP_TYPES)[number]

export const GroupDetails = z
  .object({
    guid: PlatformId,
    name: Name,
    type: z.enum(GROUP_TYPES),
    icon: Url.optional(),
    password: text(1, LIMITS.GROUP_PASSWORD_MAX).optional(),
    owner: PlatformId.optional(),
    createdAt: UnixSeconds.optional(),
    metadata: Metadata.optional(),
    tags: Tags.optional(),
  })
  .strict()
export type GroupDetails = z.infer<typeof GroupDetails>

/** One item of `POST /data_import/groups`. The import schema has no `description`. */
export const GroupImport = GroupDetails.extend({ groupOwnerDetails: UserDetails.optional() }).superRefine((g, ctx) => {
  if (g.type === 'password' && g.password === undefined) {
    ctx.addIssue({ code: 'custom', path: ['password'], message: 'a password group needs a password' })
  }
})
export type GroupImport = z.infer<typeof GroupImport>

/**
 * Member scopes. Documented for the regular APIs (admin, moderator, participant); the import
 * schema lists no enum, so this set is *assumed* for import.
 */
export const MEMBER_SCOPES = ['admin', 'moderator', 'participant'] as const
export type MemberScope = (typeof MEMBER_SCOPES)[number]

/** The documented member map key: the literal string `<guid>_member_<uid>`. */
export function memberKey(guid: string, uid: string): string {
  return `${guid}_member_${uid}`
}

/** One item of `POST /data_import/members`. */
export const MemberImport = z
  .object({
    memberId: z.string().min(1),
    guid: PlatformId,
    uid: PlatformId,
    scope: z.enum(MEMBER_SCOPES).optional(),
    isBanned: z.boolean().optional(),
    joinedAt: UnixSeconds.optional(),
    groupDetails: GroupDetails.optional(),
    userDetails: UserDetails.optional(),
  })
  .strict()
  .superRefine((m, ctx) => {
    if (m.memberId !== memberKey(m.guid, m.uid)) {
      ctx.addIssue({ code: 'custom', path: ['memberId'], message: `must be ${memberKey(m.guid, m.uid)}` })
    }
  })
export type MemberImport = z.infer<typeof MemberImport>

export const RECEIVER_TYPES = ['user', 'group'] as const
export type ReceiverType = (typeof RECEIVER_TYPES)[number]
export const MESSAGE_CATEGORIES = ['message', 'custom'] as const
export const MESSAGE_TYPES = ['text', 'image', 'audio', 'video', 'file'] as const

/** A non-negative decimal number as text: `350`, `350.2`. */
const ATTACHMENT_SIZE = /^\d{1,20}(\.\d{1,20})?$/

export const Attachment = z
  .object({
    url: Url,
    name: text(1, Number.POSITIVE_INFINITY),
    mimeType: text(1, Number.POSITIVE_INFINITY),
    extension: text(1, Number.POSITIVE_INFINITY),
    /**
     * Bytes, as a string; documented `"type": "string"` with the example `"350.2"`, so a decimal
     * fraction is taken. A JSON number is not documented and is refused.
     */
    size: leaf<string>(
      (v) => typeof v === 'string' && ATTACHMENT_SIZE.test(v),
      'a string of a non-negative decimal number of bytes, e.g. "350.2"',
    ).optional(),
  })
  .strict()
export type Attachment = z.infer<typeof Attachment>

/**
 * A message's `data`. Documented (`data-import-apis.json`): "Can contain any additional properties
 * except for the key properties", so keys besides `text`, `attachments`, `customData` and
 * `metadata` pass, as long as their keys and strings can be stored (the 10 KB limit counts them).
 */
export const MessageData = z
  .object({
    text: text(0, Number.POSITIVE_INFINITY).optional(),
    attachments: z.array(Attachment).optional(),
    customData: Metadata.optional(),
    metadata: Metadata.optional(),
  })
  .catchall(z.custom<unknown>((v) => v !== undefined && storableJson(v), { error: `must be JSON whose keys and strings are ${STORABLE}` }))
export type MessageData = z.infer<typeof MessageData>

/** JSON size in UTF-8 bytes, the way the platform's KB limits are read here (assumed: bytes). */
export function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value), 'utf8')
}

/** The most characters or bytes a number takes in JSON. */
const NUMBER_BOUND = 24

/** The most characters or bytes a string takes in JSON: every unit escaped as `\uXXXX`, and its quotes. */
const stringBound = (s: string): number => s.length * 6 + 2

/**
 * An upper bound of both the UTF-16 length and the UTF-8 bytes of `JSON.stringify(value)`, without
 * serialising: a string unit takes at most 6 (`\uXXXX`), a number at most 24. Anything that is not
 * plain JSON data (a `toJSON`, a bigint…) gives `Infinity`, so the caller measures exactly. It lets
 * the size checks skip the serialisation for the many items far below a limit.
 */
export function jsonSizeBound(value: unknown, budget = Number.POSITIVE_INFINITY): number {
  switch (typeof value) {
    case 'string':
      return stringBound(value)
    case 'number':
      return NUMBER_BOUND
    case 'boolean':
      return 5
    case 'undefined':
      return 9
    case 'object': {
      if (value === null) {
        return 4
      }
      let n = 2
      if (Array.isArray(value)) {
        for (const v of value) {
          n += (typeof v === 'string' ? stringBound(v) : jsonSizeBound(v, budget - n)) + 1
          if (n > budget) {
            return n
          }
        }
        return n
      }
      if (!isPlainProto(Object.getPrototypeOf(value))) {
        return Number.POSITIVE_INFINITY
      }
      // Strings and numbers, most values, are counted here rather than by a call each.
      for (const k in value) {
        const v = (value as Record<string, unknown>)[k]
        n += k.length * 6 + 4 + (typeof v === 'string' ? stringBound(v) : typeof v === 'number' ? NUMBER_BOUND : jsonSizeBound(v, budget - n))
        if (n > budget) {
          return n
        }
      }
      return n
    }
    default:
      return Number.POSITIVE_INFINITY
  }
}

/** One item of `POST /data_import/messages`. */
export const MessageImport = z
  .object({
    muid: PlatformId,
    sender: PlatformId,
    receiverType: z.enum(RECEIVER_TYPES),
    receiver: PlatformId,
    category: z.enum(MESSAGE_CATEGORIES).optional(),
    type: leaf<string>((v) => typeof v === 'string' && v !== '', 'a non-empty string').optional(),
    data: MessageData.optional(),
    tags: Tags.optional(),
    sentAt: UnixSeconds,
    deliveredAt: UnixSeconds.optional(),
    readAt: UnixSeconds.optional(),
    senderUserDetails: UserDetails.optional(),
    receiverUserDetails: UserDetails.optional(),
    receiverGroupDetails: GroupDetails.optional(),
    receiverGroupOwnerDetails: UserDetails.optional(),
    mentionedUserDetails: z.record(z.string(), UserDetails).optional(),
  })
  .strict()
  .superRefine((m, ctx) => {
    const category = m.category ?? 'message'
    const type = m.type ?? 'text'
    if (category === 'message' && !(MESSAGE_TYPES as readonly string[]).includes(type)) {
      ctx.addIssue({ code: 'custom', path: ['type'], message: `a message of category message has type ${MESSAGE_TYPES.join('|')}` })
    }
    if (category === 'message' && type === 'text' && (m.data?.text ?? '').trim() === '') {
      ctx.addIssue({ code: 'custom', path: ['data', 'text'], message: 'a text message needs non-empty text' })
    }
    if (category === 'message' && type !== 'text' && (m.data?.attachments?.length ?? 0) === 0) {
      ctx.addIssue({ code: 'custom', path: ['data', 'attachments'], message: `a ${type} message needs at least one attachment` })
    }
    if (category === 'custom' && m.data?.customData === undefined) {
      ctx.addIssue({ code: 'custom', path: ['data', 'customData'], message: 'a custom message needs customData' })
    }
    // Most items are far below both limits, which a bound shows without serialising. Otherwise one
    // serialisation for both limits: the data's JSON is part of the payload's, and a UTF-16 unit is
    // at most 3 UTF-8 bytes, so the data is measured on its own only when the payload could be over
    // the data limit.
    const small = Math.min(LIMITS.MESSAGE_DATA_BYTES_MAX, LIMITS.MESSAGE_PAYLOAD_CHARS_MAX)
    if (jsonSizeBound(m, small) <= small) {
      return
    }
    const payload = JSON.stringify(m)
    if (
      m.data !== undefined &&
      payload.length * 3 > LIMITS.MESSAGE_DATA_BYTES_MAX &&
      Buffer.byteLength(payload, 'utf8') > LIMITS.MESSAGE_DATA_BYTES_MAX &&
      jsonBytes(m.data) > LIMITS.MESSAGE_DATA_BYTES_MAX
    ) {
      ctx.addIssue({ code: 'custom', path: ['data'], message: `data is over ${LIMITS.MESSAGE_DATA_BYTES_MAX} bytes` })
    }
    if (payload.length > LIMITS.MESSAGE_PAYLOAD_CHARS_MAX) {
      ctx.addIssue({ code: 'custom', path: [], message: `payload is over ${LIMITS.MESSAGE_PAYLOAD_CHARS_MAX} characters` })
    }
  })
export type MessageImport = z.infer<typeof MessageImport>

/** The four import entities, in the order they must be loaded: the canonical model's list, so there is one list. */
export const ENTITIES = LEGACY_ENTITIES
export type Entity = LegacyEntity

export interface ImportItemOf {
  users: UserImport
  groups: GroupImport
  members: MemberImport
  messages: MessageImport
}

export const IMPORT_ITEM_SCHEMAS = {
  users: UserImport,
  groups: GroupImport,
  members: MemberImport,
  messages: MessageImport,
} as const

/** The map key of an item: uid, guid, memberId or muid. */
export function importKey<E extends Entity>(entity: E, item: ImportItemOf[E]): string {
  switch (entity) {
    case 'users':
      return (item as UserImport).uid
    case 'groups':
      return (item as GroupImport).guid
    case 'members':
      return (item as MemberImport).memberId
    default:
      return (item as MessageImport).muid
  }
}

// ─── error body (documented: community SDK fixtures, articles/error-guide.mdx) ──────────────────

export const ErrorBody = z.object({
  error: z
    .object({
      message: z.string(),
      devMessage: z.string().optional(),
      source: z.string().optional(),
      code: z.string(),
      /** Validation errors: a map from field to messages. */
      details: z.unknown().optional(),
    })
    .loose(),
})
export type ErrorBody = z.infer<typeof ErrorBody>

// ─── data import: responses ──────────────────────────────────────────────────────────────────────

/**
 * The shape of `data.<key>.error` is not documented (gap 1). Accepted: the standard error object,
 * a bare code string, or an object with only a message.
 */
export const ItemError = z.union([
  z.object({ code: z.string(), message: z.string().optional(), devMessage: z.string().optional() }).loose(),
  z.object({ message: z.string() }).loose(),
  z.string(),
])

export const ImportItemResult = z
  .object({
    success: z.boolean(),
    data: z.unknown().optional(),
    error: ItemError.optional(),
  })
  .loose()

/** `{data: {<key>: {success, data?, error?}}}` */
export const ImportResponse = z.object({ data: z.record(z.string(), ImportItemResult) }).loose()
export type ImportResponse = z.infer<typeof ImportResponse>

// ─── chat interface: list responses (documented: chat-apis.json) ─────────────────────────────────

export const Pagination = z
  .object({
    total: z.number().int(),
    count: z.number().int(),
    per_page: z.number().int(),
    current_page: z.number().int(),
    total_pages: z.number().int(),
  })
  .loose()

export const ChatUser = z
  .object({
    uid: z.string(),
    name: z.string(),
    avatar: z.string().optional(),
    link: z.string().optional(),
    role: z.string().optional(),
    status: z.string().optional(),
    metadata: z.unknown().optional(),
    tags: z.array(z.string()).optional(),
    createdAt: z.number().optional(),
    updatedAt: z.number().optional(),
    lastActiveAt: z.number().optional(),
    deactivatedAt: z.number().optional(),
    conversationId: z.string().optional(),
  })
  .loose()
export type ChatUser = z.infer<typeof ChatUser>

export const ChatGroup = z
  .object({
    guid: z.string(),
    name: z.string(),
    type: z.string(),
    icon: z.string().optional(),
    description: z.string().optional(),
    owner: z.string().optional(),
    membersCount: z.number().optional(),
    conversationId: z.string().optional(),
    createdAt: z.number().optional(),
    metadata: z.unknown().optional(),
    tags: z.array(z.string()).optional(),
  })
  .loose()
export type ChatGroup = z.infer<typeof ChatGroup>

export const ChatMember = z
  .object({
    uid: z.string(),
    name: z.string().optional(),
    scope: z.string().optional(),
    joinedAt: z.number().optional(),
    createdAt: z.number().optional(),
    conversationId: z.string().optional(),
  })
  .loose()
export type ChatMember = z.infer<typeof ChatMember>

export const ChatMessage = z
  .object({
    id: z.union([z.string(), z.number()]).transform(String),
    /** Not returned by the published message list (cometchat/docs chat-apis.json); only the import answer shows it. */
    muid: z.string().optional(),
    conversationId: z.string().optional(),
    sender: z.string(),
    receiverType: z.string(),
    receiver: z.string(),
    category: z.string().optional(),
    type: z.string().optional(),
    data: z.record(z.string(), z.unknown()).optional(),
    sentAt: z.number(),
    updatedAt: z.number().optional(),
    deliveredAt: z.number().optional(),
    readAt: z.number().optional(),
    tags: z.array(z.string()).optional(),
    /** Set by `PUT /messages/{id}` (documented in its answer's example: `editedAt`, `editedBy`). */
    editedAt: z.number().optional(),
    editedBy: z.string().optional(),
    /** Set by `DELETE /messages/{id}` without `permanent` (soft delete; documented filters `hideDeleted`/`onlyDeleted`). */
    deletedAt: z.number().optional(),
    deletedBy: z.string().optional(),
  })
  .loose()
export type ChatMessage = z.infer<typeof ChatMessage>

export function pageOf<T extends z.ZodType>(item: T) {
  return z.object({ data: z.array(item), meta: z.object({ pagination: Pagination }).loose() }).loose()
}

export const UsersPage = pageOf(ChatUser)
export const GroupsPage = pageOf(ChatGroup)
export const MembersPage = pageOf(ChatMember)

export const MessageCursor = z
  .object({
    affix: z.enum(['append', 'prepend']).optional(),
    sentAt: z.number().optional(),
    id: z.union([z.string(), z.number()]).transform(String).optional(),
  })
  .loose()

export const MessagesPage = z
  .object({
    data: z.array(ChatMessage),
    meta: z
      .object({
        current: z.object({ limit: z.number(), count: z.number() }).loose(),
        next: MessageCursor.optional(),
      })
      .loose(),
  })
  .loose()
export type MessagesPage = z.infer<typeof MessagesPage>

// ─── management interface (documented: management-apis.json) ─────────────────────────────────────

export const CreateAppRequest = z
  .object({
    name: Name,
    region: z.enum(['us', 'eu', 'in']),
    /** Only "3" is allowed. */
    version: z.string().regex(/^\d+$/).default('3'),
    skipSampleData: z.boolean().optional(),
  })
  .strict()
export type CreateAppRequest = z.input<typeof CreateAppRequest>

export const ApiKeyEntry = z.object({ apiKey: z.string(), name: z.string().optional(), scope: z.string(), createdBy: z.string().optional() }).loose()

export const AppRecord = z
  .object({
    /** The App ID; the field is `id`, not `appId`. */
    id: z.string(),
    name: z.string(),
    region: z.string(),
    plan: z.string().optional(),
    state: z.string().optional(),
    createdAt: z.number().optional(),
    /** A map keyed by key value. */
    apiKeys: z.record(z.string(), ApiKeyEntry).optional(),
  })
  .loose()
export type AppRecord = z.infer<typeof AppRecord>

export const CreateAppResponse = z.object({ data: AppRecord }).loose()
export const ListAppsResponse = z
  .object({ data: z.array(AppRecord), meta: z.object({ pagination: Pagination.optional() }).loose().optional() })
  .loose()
export const DeleteAppResponse = z.object({ data: z.object({ success: z.boolean(), scheduledToDeleteAt: z.number().optional() }).loose() }).loose()

// Webhooks: ./webhooks.ts (field rules, trigger ids, answers, delivery envelopes).
