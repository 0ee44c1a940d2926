/**
 * zod schemas of the chat interface's write calls that a delta run makes (issue 13): request
 * bodies (strict: we never send what the platform would refuse) and answers (lenient: unknown
 * fields pass). Source: cometchat/docs `chat-apis.json` (operationIds named below, read @
 * 0384fbab6efa), `rest-api/group-members.mdx` (25 users per call), `articles/error-guide.mdx`
 * (codes), `articles/properties-and-constraints.mdx` (limits).
 */
import { z } from 'zod'

import {
  ChatGroup,
  ChatMessage,
  ChatUser,
  GROUP_TYPES,
  jsonBytes,
  LIMITS,
  MEMBER_SCOPES,
  Metadata,
  Name,
  PlatformId,
  Tags,
  text,
  Url,
} from './schemas.ts'

/** Documented: "A maximum of 25 users can be added per API Call" (`rest-api/group-members.mdx`). */
export const MEMBERS_PER_CALL_MAX = 25
/** Documented: group description "Max 255 characters" (`articles/properties-and-constraints.mdx`). */
export const GROUP_DESCRIPTION_MAX = 255

function metadataWithinLimit(v: { metadata?: Record<string, unknown> | undefined }, ctx: z.RefinementCtx): void {
  if (v.metadata !== undefined && jsonBytes(v.metadata) > LIMITS.METADATA_BYTES_MAX) {
    ctx.addIssue({ code: 'custom', path: ['metadata'], message: `metadata is over ${LIMITS.METADATA_BYTES_MAX} bytes` })
  }
}

/** A field may be set or unset, never both; and a body must change something. */
function setOrUnset(v: Record<string, unknown> & { unset?: readonly string[] | undefined }, ctx: z.RefinementCtx): void {
  for (const field of v.unset ?? []) {
    if (v[field] !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['unset'], message: `${field} is both set and unset` })
    }
  }
  const sets = Object.entries(v).some(([k, x]) => k !== 'unset' && x !== undefined)
  if (!sets && (v.unset ?? []).length === 0) {
    ctx.addIssue({ code: 'custom', path: [], message: 'the body changes nothing' })
  }
}

// ─── users (operationIds update-user, deactivate-users, reactivate-users) ────────────────────────

/** Documented unsettable user fields: "The unsettable user attributes are avatar, link and metadata." */
export const USER_UNSETTABLE = ['avatar', 'link', 'metadata'] as const

/** `PUT /users/{uid}` (update-user): no `onBehalfOf` is documented for it. */
export const UserUpdate = z
  .object({
    name: Name.optional(),
    avatar: Url.optional(),
    link: Url.optional(),
    role: PlatformId.optional(),
    statusMessage: text(0, Number.POSITIVE_INFINITY).optional(),
    metadata: Metadata.optional(),
    tags: Tags.optional(),
    unset: z.array(z.enum(USER_UNSETTABLE)).max(USER_UNSETTABLE.length).optional(),
  })
  .strict()
  .superRefine(metadataWithinLimit)
  .superRefine(setOrUnset)
export type UserUpdate = z.input<typeof UserUpdate>

/** `DELETE /users` (deactivate-users): `{uidsToDeactivate}`. */
export const DeactivateUsersRequest = z.object({ uidsToDeactivate: z.array(PlatformId).min(1) }).strict()
/** `PUT /users` (reactivate-users): `{uidsToActivate}`. */
export const ReactivateUsersRequest = z.object({ uidsToActivate: z.array(PlatformId).min(1) }).strict()

export const UserAnswer = z.object({ data: ChatUser }).loose()
/** Documented answer: `{data: {deactivatedUids: [...]}}`. */
export const DeactivateUsersAnswer = z.object({ data: z.object({ deactivatedUids: z.array(z.string()) }).loose() }).loose()
/**
 * Documented answer (example): `{data: {nonDeactivatedUids: [...]}}` — the uids that are active
 * again. The newer name `reactivatedUids` is read too, in case the example's name changes.
 */
export const ReactivateUsersAnswer = z
  .object({ data: z.object({ nonDeactivatedUids: z.array(z.string()).optional(), reactivatedUids: z.array(z.string()).optional() }).loose() })
  .loose()

// ─── groups (update-group, delete-group) ────────────────────────────────────────────────────────

/** Documented unsettable group fields: "icon, description and metadata". */
export const GROUP_UNSETTABLE = ['icon', 'description', 'metadata'] as const

/**
 * `PUT /groups/{guid}` (update-group; optional `onBehalfOf`, which makes the platform ignore
 * `owner`). A `password` type needs a password (`ERR_EMPTY_GROUP_PASS`): refused here when the body
 * makes the group a password group without one.
 */
export const GroupUpdate = z
  .object({
    name: Name.optional(),
    type: z.enum(GROUP_TYPES).optional(),
    password: text(1, LIMITS.GROUP_PASSWORD_MAX).optional(),
    icon: Url.optional(),
    description: text(0, GROUP_DESCRIPTION_MAX).optional(),
    metadata: Metadata.optional(),
    owner: PlatformId.optional(),
    tags: Tags.optional(),
    unset: z.array(z.enum(GROUP_UNSETTABLE)).max(GROUP_UNSETTABLE.length).optional(),
  })
  .strict()
  .superRefine(metadataWithinLimit)
  .superRefine(setOrUnset)
  .superRefine((g, ctx) => {
    if (g.type === 'password' && g.password === undefined) {
      ctx.addIssue({ code: 'custom', path: ['password'], message: 'a password group needs a password (ERR_EMPTY_GROUP_PASS)' })
    }
    if (g.password !== undefined && g.type !== undefined && g.type !== 'password') {
      ctx.addIssue({ code: 'custom', path: ['password'], message: `a ${g.type} group has no password` })
    }
  })
export type GroupUpdate = z.input<typeof GroupUpdate>

export const GroupAnswer = z.object({ data: ChatGroup }).loose()

/** `{data: {success, message}}`: delete-group, kick-group-member, ban-group-user, unban-group-user. */
export const SuccessAnswer = z.object({ data: z.object({ success: z.boolean(), message: z.string().optional() }).loose() }).loose()

// ─── members (add-group-members, change-group-member-scope, kick, ban, unban) ────────────────────

/** The scope lists of `POST /groups/{guid}/members`, and the ban list. */
export const ADD_MEMBER_LISTS = ['admins', 'moderators', 'participants', 'usersToBan'] as const
export type AddMemberList = (typeof ADD_MEMBER_LISTS)[number]

/** The list a scope is added through. */
export const LIST_OF_SCOPE = { admin: 'admins', moderator: 'moderators', participant: 'participants' } as const

/** `POST /groups/{guid}/members`: at most 25 uids over all lists (documented). */
export const AddMembersRequest = z
  .object({
    admins: z.array(PlatformId).optional(),
    moderators: z.array(PlatformId).optional(),
    participants: z.array(PlatformId).optional(),
    usersToBan: z.array(PlatformId).optional(),
  })
  .strict()
  .superRefine((b, ctx) => {
    const all = ADD_MEMBER_LISTS.flatMap((l) => b[l] ?? [])
    if (all.length === 0) {
      ctx.addIssue({ code: 'custom', path: [], message: 'no uid to add' })
    }
    if (all.length > MEMBERS_PER_CALL_MAX) {
      ctx.addIssue({ code: 'custom', path: [], message: `${all.length} uids: at most ${MEMBERS_PER_CALL_MAX} per call` })
    }
    if (new Set(all).size !== all.length) {
      ctx.addIssue({ code: 'custom', path: [], message: 'a uid appears twice' })
    }
  })
export type AddMembersRequest = z.input<typeof AddMembersRequest>

const MemberResult = z.object({ success: z.boolean(), data: z.unknown().optional(), error: z.unknown().optional() }).loose()
/** Documented answer: per list, per uid `{success, data?}` (failures: "error objects in their respective scope"). */
export const AddMembersAnswer = z.object({ data: z.record(z.string(), z.record(z.string(), MemberResult)) }).loose()

/** `PUT /groups/{guid}/members/{uid}`: `{scope}`. */
export const ChangeScopeRequest = z.object({ scope: z.enum(MEMBER_SCOPES) }).strict()
/** Documented answer: `{data: {guid, uid, scope, joinedAt}}`. */
export const ChangeScopeAnswer = z
  .object({ data: z.object({ guid: z.string(), uid: z.string(), scope: z.string(), joinedAt: z.number().optional() }).loose() })
  .loose()

// ─── messages (update-message, delete-message, get-message-details) ─────────────────────────────

/**
 * `PUT /messages/{id}` (update-message, on behalf of a user): documented body `{data: {text,
 * metadata}, tags}`. Nothing else of `data` is documented as editable, so nothing else is sent.
 */
export const MessageUpdate = z
  .object({
    data: z
      .object({ text: text(0, LIMITS.MESSAGE_PAYLOAD_CHARS_MAX).optional(), metadata: Metadata.optional() })
      .strict()
      .optional(),
    tags: Tags.optional(),
  })
  .strict()
  .superRefine((m, ctx) => {
    if (m.data?.text === undefined && m.data?.metadata === undefined && m.tags === undefined) {
      ctx.addIssue({ code: 'custom', path: [], message: 'the body changes nothing' })
    }
    if (m.data !== undefined && jsonBytes(m.data) > LIMITS.MESSAGE_DATA_BYTES_MAX) {
      ctx.addIssue({ code: 'custom', path: ['data'], message: `data is over ${LIMITS.MESSAGE_DATA_BYTES_MAX} bytes` })
    }
  })
export type MessageUpdate = z.input<typeof MessageUpdate>

/** `DELETE /messages/{id}`: `{permanent}` (documented; soft delete when false). */
export const DeleteMessageRequest = z.object({ permanent: z.boolean() }).strict()

export const MessageAnswer = z.object({ data: ChatMessage }).loose()

/**
 * The answer of update-message / delete-message: an action message (category `action`) whose
 * `data.entities.on.entity` is the message acted on (documented example: `action: "edited"`,
 * entities `by`, `for`, `on`; the delete example repeats it).
 */
export const MessageActionAnswer = z.object({ data: ChatMessage }).loose()

/** The message an action message acted on (`data.entities.on.entity`), when it parses. */
export function actedOnMessage(action: ChatMessage): ChatMessage | undefined {
  const on = (action.data?.entities as { on?: { entity?: unknown } } | undefined)?.on?.entity
  const parsed = ChatMessage.safeParse(on)
  return parsed.success ? parsed.data : undefined
}
