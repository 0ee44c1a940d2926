/**
 * Webhooks of the management interface, as published (facts i12 §4; cometchat/docs
 * `management-apis.json`, `rest-api/management-apis/webhooks/overview.mdx`,
 * `fundamentals/webhooks-overview.mdx`): the field rules, the trigger ids, the answers and the
 * delivery envelope. The client (`client.ts`) validates input with these schemas before it sends
 * anything, so an id, password or URL the platform would refuse never costs a request.
 */
import { z } from 'zod'

import { ChatferryError } from '../errors.ts'
import { Pagination } from './schemas.ts'
import { isLoopbackHost } from './transport.ts'

/** The documented limits (overview.mdx "Constraints" table; name: the properties table). */
export const WEBHOOK_LIMITS = {
  PER_APP_MAX: 25,
  ID_MAX: 50,
  NAME_MAX: 50,
  URL_MAX: 255,
  USERNAME_MAX: 50,
  PASSWORD_MAX: 100,
} as const

/**
 * The header choosing the implementation: absent = the legacy webhook, `"2"` = the new one
 * (management-apis.json components.parameters). The client always sends `"2"`.
 */
export const WEBHOOK_VERSION_HEADER = 'X-Webhook-Version'
export const WEBHOOK_VERSIONS = ['legacy', '2'] as const
export type WebhookVersion = (typeof WEBHOOK_VERSIONS)[number]

/**
 * Every documented trigger id: the management overview's 46 and the six more of the fundamentals
 * overview (`user_mentioned`, `group_member_removed`, `call_busy`, `call_cancelled`,
 * `call_rejected`, `call_unanswered`) — 52.
 */
export const WEBHOOK_TRIGGERS = [
  'message_sent',
  'message_edited',
  'message_deleted',
  'message_reaction_added',
  'message_reaction_removed',
  'user_blocked',
  'user_unblocked',
  'group_created',
  'group_updated',
  'group_deleted',
  'group_member_joined',
  'group_member_left',
  'group_member_added',
  'group_member_kicked',
  'group_member_banned',
  'group_member_unbanned',
  'group_member_scope_changed',
  'group_owner_transferred',
  'user_connection_status_changed',
  'message_delivery_receipt',
  'message_read_receipt',
  'call_initiated',
  'call_started',
  'call_participant_joined',
  'call_participant_left',
  'call_ended',
  'meeting_started',
  'meeting_participant_joined',
  'meeting_participant_left',
  'meeting_ended',
  'recording_generated',
  'transcription_generated',
  'after_campaign_completed',
  'after_campaign_failed',
  'after_notification_created',
  'after_feed_item_sent',
  'after_feed_item_delivered',
  'after_feed_item_read',
  'after_feed_item_interacted',
  'after_push_notification_sent',
  'after_push_notification_delivered',
  'after_push_notification_clicked',
  'moderation_engine_approved',
  'moderation_engine_blocked',
  'moderation_manual_approved',
  'moderation_engine_failed',
  'user_mentioned',
  'group_member_removed',
  'call_busy',
  'call_cancelled',
  'call_rejected',
  'call_unanswered',
] as const
export type WebhookTrigger = (typeof WEBHOOK_TRIGGERS)[number]
const TRIGGER_SET: ReadonlySet<string> = new Set(WEBHOOK_TRIGGERS)
export function isWebhookTrigger(value: string): value is WebhookTrigger {
  return TRIGGER_SET.has(value)
}

/**
 * "alphanumeric (UTF8mb4, no spaces)" for the id; the docs' own example id is `test_webhook201`,
 * so `_` is accepted in ids (and nowhere else). Anything else — spaces, `-`, `.`, non-ASCII
 * letters — is refused (assumed: the stricter reading).
 */
const ID_PATTERN = /^[A-Za-z0-9_]+$/
/** "alphanumeric (no spaces)" for username and password: ASCII letters and digits only (assumed: the stricter reading). */
const ALNUM_PATTERN = /^[A-Za-z0-9]+$/

export const WebhookId = z
  .string()
  .min(1, 'must not be empty')
  .max(WEBHOOK_LIMITS.ID_MAX, `must be at most ${WEBHOOK_LIMITS.ID_MAX} characters`)
  .regex(ID_PATTERN, 'must be alphanumeric (letters, digits, _), without spaces')
export const WebhookName = z
  .string()
  .min(1, 'must not be empty')
  .max(WEBHOOK_LIMITS.NAME_MAX, `must be at most ${WEBHOOK_LIMITS.NAME_MAX} characters`)
export const WebhookUrl = z
  .string()
  .min(1, 'must not be empty')
  .max(WEBHOOK_LIMITS.URL_MAX, `must be at most ${WEBHOOK_LIMITS.URL_MAX} characters`)
  .superRefine((value, ctx) => {
    const problem = webhookUrlProblem(value)
    if (problem) {
      ctx.addIssue({ code: 'custom', message: problem })
    }
  })
export const WebhookUsername = z
  .string()
  .min(1, 'must not be empty')
  .max(WEBHOOK_LIMITS.USERNAME_MAX, `must be at most ${WEBHOOK_LIMITS.USERNAME_MAX} characters`)
  .regex(ALNUM_PATTERN, 'must be alphanumeric (letters and digits), without spaces')
// The messages never repeat the value: a password is a secret.
export const WebhookPassword = z
  .string()
  .min(1, 'must not be empty')
  .max(WEBHOOK_LIMITS.PASSWORD_MAX, `must be at most ${WEBHOOK_LIMITS.PASSWORD_MAX} characters`)
  .regex(ALNUM_PATTERN, 'must be alphanumeric (letters and digits), without spaces')

/**
 * Documented: "Must be a publicly accessible HTTPS endpoint". Plain http is accepted only to a
 * loopback address, so the sandbox can deliver to a local receiver (the real platform would not
 * reach it anyway). Returns the problem, or undefined.
 */
export function webhookUrlProblem(value: string): string | undefined {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return 'is not a valid URL'
  }
  if (url.protocol === 'https:') {
    return undefined
  }
  if (url.protocol === 'http:' && isLoopbackHost(url.hostname)) {
    return undefined
  }
  if (url.protocol === 'http:') {
    return 'must use https:// (plain http:// is allowed only for loopback addresses such as 127.0.0.1)'
  }
  return `must be an https:// URL, got ${url.protocol}`
}

export const basicAuthNeedsCredentials = (
  w: { useBasicAuth?: boolean | undefined; username?: string | undefined; password?: string | undefined },
  ctx: z.RefinementCtx,
) => {
  if (!w.useBasicAuth) {
    return
  }
  if (!w.username) {
    ctx.addIssue({ code: 'custom', path: ['username'], message: 'is required when useBasicAuth is true' })
  }
  if (!w.password) {
    ctx.addIssue({ code: 'custom', path: ['password'], message: 'is required when useBasicAuth is true' })
  }
}

/** The fields of "create webhook" (documented; `*` required: id, name, webhookURL), before the basic-auth rule. */
export const CreateWebhookFields = z.object({
  id: WebhookId,
  name: WebhookName,
  webhookURL: WebhookUrl,
  useBasicAuth: z.boolean().default(false),
  username: WebhookUsername.optional(),
  password: WebhookPassword.optional(),
  enabled: z.boolean().default(true),
  /** Documented: default false. */
  retryOnFailure: z.boolean().default(false),
})

/** The body of "create webhook". */
export const CreateWebhookRequest = CreateWebhookFields.strict().superRefine(basicAuthNeedsCredentials)
export type CreateWebhookRequest = z.output<typeof CreateWebhookRequest>
export type CreateWebhookInput = z.input<typeof CreateWebhookRequest>

/** The body of "update webhook": the same fields but `id`, all optional. */
export const UpdateWebhookRequest = z
  .object({
    name: WebhookName,
    webhookURL: WebhookUrl,
    useBasicAuth: z.boolean(),
    username: WebhookUsername,
    password: WebhookPassword,
    enabled: z.boolean(),
    retryOnFailure: z.boolean(),
  })
  .partial()
  .strict()
export type UpdateWebhookRequest = z.output<typeof UpdateWebhookRequest>

/** The body of "add triggers" / "remove triggers". */
export const WebhookTriggersRequest = z
  .object({
    triggerIds: z
      .array(z.string())
      .min(1, 'must name at least one trigger')
      .superRefine((ids, ctx) => {
        for (const id of ids) {
          if (!isWebhookTrigger(id)) {
            ctx.addIssue({ code: 'custom', message: `${JSON.stringify(id.slice(0, 60))} is not a documented trigger id` })
          }
        }
      }),
  })
  .strict()

/**
 * A webhook as answered. Documented: `id, name, webhookURL, enabled` (webhookSchema) and
 * `createdAt`, `updatedAt` (examples). The rest is optional: `useBasicAuth`, `username`,
 * `retryOnFailure` are request fields the answers may carry; `version` is the sandbox's extra.
 * A password is never part of an answer.
 */
export const WebhookRecord = z
  .object({
    id: z.string(),
    name: z.string().optional(),
    webhookURL: z.string().optional(),
    enabled: z.boolean().optional(),
    useBasicAuth: z.boolean().optional(),
    username: z.string().optional(),
    retryOnFailure: z.boolean().optional(),
    version: z.string().optional(),
    createdAt: z.number().optional(),
    updatedAt: z.number().optional(),
  })
  .loose()
export type WebhookRecord = z.output<typeof WebhookRecord>

/**
 * One webhook answer in any of the published shapes: the create example is `[{"data": {…}}]`,
 * the get/update example `{"data": [{"data": {…}}]}`; a plain `{"data": {…}}` is read too.
 */
export const WebhookAnswer = z.union([
  z.object({ data: WebhookRecord }).loose(),
  z.array(z.object({ data: WebhookRecord }).loose()).length(1),
  z.object({ data: z.array(z.object({ data: WebhookRecord }).loose()).length(1) }).loose(),
])
export function webhookOfAnswer(answer: z.output<typeof WebhookAnswer>): WebhookRecord {
  if (Array.isArray(answer)) {
    return (answer[0] as { data: WebhookRecord }).data
  }
  const data = answer.data
  if (Array.isArray(data)) {
    return (data[0] as { data: WebhookRecord }).data
  }
  return data as WebhookRecord
}

export const ListWebhooksResponse = z
  .object({ data: z.array(WebhookRecord), meta: z.object({ pagination: Pagination.optional() }).loose().optional() })
  .loose()
export const DeleteWebhookResponse = z.object({ data: z.object({ success: z.boolean(), message: z.string().optional() }).loose() }).loose()

/** Per trigger: `{success: true, message}`, or (sandbox, assumed) `{success: false, error}`. */
export const AddTriggersResponse = z
  .object({
    data: z.record(
      z.string(),
      z
        .object({
          success: z.boolean(),
          message: z.string().optional(),
          error: z.object({ code: z.string(), message: z.string().optional() }).loose().optional(),
        })
        .loose(),
    ),
  })
  .loose()
export const ListTriggersResponse = z
  .object({
    data: z.array(z.object({ id: z.string(), description: z.string().optional() }).loose()),
    meta: z.object({ pagination: Pagination.optional() }).loose().optional(),
  })
  .loose()
export const RemoveTriggersResponse = DeleteWebhookResponse

// ─── deliveries ──────────────────────────────────────────────────────────────────────────────────

/** A user in an envelope (examples: uid, name, status, role, lastActiveAt, …). */
const EnvelopeUser = z.object({ uid: z.string(), name: z.string() }).loose()
/** A group in an envelope (examples: guid, name, type, scope, membersCount, joinedAt, conversationId, hasJoined, createdAt, owner). */
const EnvelopeGroup = z
  .object({ guid: z.string(), name: z.string(), type: z.string(), conversationId: z.string().optional(), membersCount: z.number().optional() })
  .loose()
const EntityWrapper = z.object({ entity: z.record(z.string(), z.unknown()), entityType: z.string() }).loose()
/** `message_sent` (example): a message with `data.entities.sender/receiver` as `{entity, entityType}`. */
const EnvelopeMessage = z
  .object({
    id: z.union([z.string(), z.number()]),
    conversationId: z.string(),
    sender: z.string(),
    receiverType: z.enum(['user', 'group']),
    receiver: z.string(),
    category: z.string(),
    type: z.string(),
    data: z.object({ entities: z.object({ sender: EntityWrapper, receiver: EntityWrapper }).loose() }).loose(),
    sentAt: z.number(),
  })
  .loose()

/**
 * `message_edited` / `message_deleted` (example): the action message of the edit, `category: action`,
 * `data.action` and `data.entities.by/for/on` (`on`: the message acted on).
 */
const EnvelopeActionMessage = z
  .object({
    id: z.union([z.string(), z.number()]),
    conversationId: z.string(),
    sender: z.string(),
    receiverType: z.enum(['user', 'group']),
    receiver: z.string(),
    category: z.literal('action'),
    type: z.string(),
    data: z.object({ action: z.string(), entities: z.object({ by: EntityWrapper, for: EntityWrapper, on: EntityWrapper }).loose() }).loose(),
    sentAt: z.number(),
  })
  .loose()

const groupAndMembers = z.object({ group: EnvelopeGroup, members: z.record(z.string(), EnvelopeUser) }).loose()
const groupMembersBy = groupAndMembers.extend({ by: EnvelopeUser })
const groupOnly = z.object({ group: EnvelopeGroup }).loose()

/**
 * The `data` of each trigger's envelope, as far as the examples give it; the others are any object.
 * `group_created` (example): group and members (the example's owner is a member);
 * added/kicked/banned/unbanned/scope_changed: group, members, by; joined/left: group, members;
 * updated/deleted/owner_transferred: group; `message_sent`: message; `message_edited`/`_deleted`: the action message.
 */
export const WEBHOOK_DATA_SCHEMAS: Partial<Record<WebhookTrigger, z.ZodType>> = {
  group_created: groupAndMembers,
  group_member_added: groupMembersBy,
  group_member_kicked: groupMembersBy,
  group_member_banned: groupMembersBy,
  group_member_unbanned: groupMembersBy,
  group_member_scope_changed: groupMembersBy,
  group_member_joined: groupAndMembers,
  group_member_left: groupAndMembers,
  group_updated: groupOnly,
  group_deleted: groupOnly,
  group_owner_transferred: groupOnly,
  message_sent: z.object({ message: EnvelopeMessage }).loose(),
  message_edited: z.object({ message: EnvelopeActionMessage }).loose(),
  message_deleted: z.object({ message: EnvelopeActionMessage }).loose(),
}

/** The envelope of every delivery (every example): `{trigger, data, appId, region, webhook}`. */
export const WebhookEnvelope = z
  .object({
    trigger: z.enum(WEBHOOK_TRIGGERS),
    data: z.record(z.string(), z.unknown()),
    appId: z.string(),
    region: z.string(),
    webhook: z.string(),
  })
  .loose()
  .superRefine((e, ctx) => {
    const schema = WEBHOOK_DATA_SCHEMAS[e.trigger]
    if (!schema) {
      return
    }
    const r = schema.safeParse(e.data)
    if (!r.success) {
      for (const issue of r.error.issues) {
        ctx.addIssue({ code: 'custom', path: ['data', ...issue.path.map(String)], message: issue.message })
      }
    }
  })
export type WebhookEnvelope = z.output<typeof WebhookEnvelope>

// ─── input errors ────────────────────────────────────────────────────────────────────────────────

/** Input the platform would refuse, caught before the request: names each field, never its value. */
export class WebhookInputError extends ChatferryError {
  readonly problems: readonly { path: string; message: string }[]
  constructor(operation: string, problems: readonly { path: string; message: string }[]) {
    super('CONFIG_INVALID', `${operation}: refused before sending\n${problems.map((p) => `  - ${p.path || '(body)'}: ${p.message}`).join('\n')}`)
    this.name = 'WebhookInputError'
    this.problems = problems
  }
}

/** Parses webhook input or throws {@link WebhookInputError} naming the fields (the values are never repeated). */
export function parseWebhookInput<S extends z.ZodType>(operation: string, schema: S, input: unknown, pathPrefix: string[] = []): z.output<S> {
  const r = schema.safeParse(input)
  if (r.success) {
    return r.data
  }
  const problems = r.error.issues.map((i) => {
    const path = [...pathPrefix, ...i.path.map(String)].join('.')
    const message =
      i.code === 'unrecognized_keys'
        ? `unknown field${i.keys.length === 1 ? '' : 's'} ${i.keys.join(', ')}`
        : i.code === 'invalid_type'
          ? `expected ${i.expected}`
          : i.message
    return { path, message }
  })
  throw new WebhookInputError(operation, problems)
}
