/**
 * The `target:` and `management:` sections of the configuration: which app, where, with which key
 * and at which quota. The platform's own settings, so the platform's module owns them; the whole
 * file is composed in src/job/config.ts.
 */
import { z } from 'zod'

import type { DeepReadonly } from '../lib.ts'
import { redactUrl } from '../logger.ts'
import { LIMITS } from './schemas.ts'
import { transportProblem } from './transport.ts'

/** The platform's documented data-import ceiling: 60 requests per minute per app. */
export const DEFAULT_REQUESTS_PER_MINUTE = 60
/** The platform's documented data-import ceiling: 50 entities per request. */
export const MAX_ITEMS_PER_REQUEST = 50
/**
 * Chat-interface requests per minute chatferry allows itself by default (the update lane of a
 * delta run, `verify`'s and `plan --check-target`'s reads), all processes together. The platform's
 * chat limits depend on the plan (`articles/rate-limits.mdx`): Build (free) 500/min, paid plans
 * 10,000/min for core operations (user create/delete, group create/join/leave) and 20,000/min for
 * standard ones (everything else), per app, shared with the app's live users. 1,000 is 10% of the
 * core and 5% of the standard limit: in a phased cutover the users already on the platform keep
 * 90% or more of it. On the Build plan lower it (e.g. 250, half of 500).
 */
export const DEFAULT_CHAT_REQUESTS_PER_MINUTE = 1000
export const DEFAULT_MANAGEMENT_URL = 'https://apimgmt.cometchat.io'
export const REGIONS = ['us', 'eu', 'in'] as const
export type Region = (typeof REGIONS)[number]

/**
 * A URL the platform client may talk to: HTTPS anywhere, plain HTTP only to loopback (the sandbox).
 */
export const secureUrl = z.string().superRefine((value, ctx) => {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    ctx.addIssue({ code: 'custom', message: `not a valid URL: ${JSON.stringify(redactUrl(value))}` })
    return
  }
  const problem = transportProblem(url)
  if (problem !== undefined) {
    ctx.addIssue({ code: 'custom', message: problem })
  }
})

const nonEmpty = z.string().min(1, 'must not be empty')

const QuotaSchema = z
  .object({
    /** Import requests per minute the app may send. @default 60 (the documented limit) */
    requestsPerMinute: z.number().int().positive().max(100_000).default(DEFAULT_REQUESTS_PER_MINUTE),
    /** Items per import request. @default 50 (the documented maximum) */
    itemsPerRequest: z.number().int().min(1).max(MAX_ITEMS_PER_REQUEST).default(MAX_ITEMS_PER_REQUEST),
  })
  .strict()

const ChatQuotaSchema = z
  .object({
    /** Chat-interface requests per minute, all processes together. @default 1000 (see DEFAULT_CHAT_REQUESTS_PER_MINUTE) */
    requestsPerMinute: z.number().int().positive().max(100_000).default(DEFAULT_CHAT_REQUESTS_PER_MINUTE),
  })
  .strict()

const MemberLimitsSchema = z
  .object({
    /** Groups one user may be in; memberships beyond are rejected when planning. @default 2000 (documented) */
    groupsPerUser: z.number().int().min(1).max(LIMITS.GROUPS_PER_USER_MAX).default(LIMITS.GROUPS_PER_USER_MAX),
    /** Members one group may hold; memberships beyond are rejected when planning. @default 100000 (documented) */
    membersPerGroup: z.number().int().min(1).max(LIMITS.MEMBERS_PER_GROUP_MAX).default(LIMITS.MEMBERS_PER_GROUP_MAX),
  })
  .strict()

export const TargetSchema = z
  .object({
    /** The app id; part of the default base URL and of every report. */
    appId: nonEmpty.regex(/^[a-z0-9_-]+$/i, 'must be alpha-dash (letters, digits, - and _)'),
    region: z.enum(REGIONS),
    /** The app's REST API key with fullAccess scope. Use `${VAR}`; never commit it. */
    apiKey: nonEmpty,
    /** @default https://{appId}.api-{region}.cometchat.io/v3 */
    baseUrl: secureUrl.optional(),
    quota: QuotaSchema.default({ requestsPerMinute: DEFAULT_REQUESTS_PER_MINUTE, itemsPerRequest: MAX_ITEMS_PER_REQUEST }),
    /** The chat interface's budget (update lane, verify), separate from the import quota. */
    chatQuota: ChatQuotaSchema.prefault({}),
    /** The platform's member limits (lower them only to rehearse against a sandbox configured so). */
    limits: MemberLimitsSchema.prefault({}),
    /** Per-request timeout in milliseconds. @default 30000 */
    timeoutMs: z.number().int().positive().default(30_000),
  })
  .strict()

export const ManagementSchema = z
  .object({
    url: secureUrl.default(DEFAULT_MANAGEMENT_URL),
    key: nonEmpty,
    secret: nonEmpty,
  })
  .strict()

/** The resolved `target:` section: the base URL always set (the default one when the file has none). */
export type TargetConfig = DeepReadonly<z.output<typeof TargetSchema> & { baseUrl: string }>
/** The resolved `management:` section. */
export type ManagementConfig = DeepReadonly<z.output<typeof ManagementSchema>>

/** The base URL the platform documents for an app: `https://{appId}.api-{region}.cometchat.io/v3`. */
export function defaultBaseUrl(appId: string, region: Region): string {
  return `https://${appId.toLowerCase()}.api-${region}.cometchat.io/v3`
}
