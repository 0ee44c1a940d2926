/**
 * Per-app settings of the sandbox: every documented limit as a knob (defaults are the documented
 * values), the choices the sandbox makes where the documentation is silent, and the fault knobs.
 * Settings are stored with the app, so they survive a restart of a sandbox on a persistent store.
 */
import { z } from 'zod'

import { ENTITIES, LIMITS } from '../target/schemas.ts'

const Probability = z.number().min(0).max(1)

/** The fault knobs of one app. */
export const FaultSettings = z
  .object({
    /** Seed of the fault RNG; the same seed and the same requests give the same faults. Absent: Math.random. */
    seed: z.number().int().optional(),
    /** Probability of a 429 even under the limit (the request is not processed and not counted). */
    extra429: Probability,
    /**
     * Probability of a transient 500 after a partial commit of a request with no bad row: some of
     * the batch's good items are written (see `partialCommitShape`), then 500 `ERR_EXCEPTION`
     * without per-item results. A request of one item never gets it (a 500 to a request that held
     * only one row is the platform's word about that row).
     */
    partialCommit500: Probability,
    /**
     * Which good items a `partialCommit500` writes: `subset`, a random non-empty proper subset;
     * `prefix`, the first 0 to n−1 good items in request order (a write cut short).
     * @default 'subset'
     */
    partialCommitShape: z.enum(['subset', 'prefix']),
    /** Probability of destroying the connection before anything is processed. */
    dropBeforeCommit: Probability,
    /** Probability of committing everything and then destroying the connection without an answer. */
    dropAfterCommit: Probability,
    /** Extra delay added to every data-import request, drawn uniformly from [min, max] ms. */
    latencyMs: z
      .object({ min: z.number().int().min(0).max(600_000), max: z.number().int().min(0).max(600_000) })
      .strict()
      .refine((l) => l.min <= l.max, 'min must not exceed max'),
  })
  .strict()
export type FaultSettings = z.infer<typeof FaultSettings>

/**
 * Faults of the chat writes (a delta run's update lane), drawn from their own dice (seeded by
 * `faults.seed`), so they never shift the import faults of the same seed.
 */
export const ChatFaultSettings = z
  .object({
    /** Probability of a 429 under the limit (not processed, not counted, `Retry-After: 1`). */
    extra429: Probability,
    /** Probability of destroying the connection before the call is processed. */
    dropBeforeCommit: Probability,
    /** Probability of applying the call and then destroying the connection without an answer. */
    dropAfterCommit: Probability,
  })
  .strict()
export type ChatFaultSettings = z.infer<typeof ChatFaultSettings>

/** Every knob of one app. */
export const AppSettings = z
  .object({
    /** Data-import requests per app per window, all four endpoints together. @default 60 (documented) */
    requestsPerMinute: z.number().int().min(1).max(1_000_000),
    /** Length of the sliding rate-limit window in ms (a knob so tests need not wait a minute). @default 60000 */
    windowMs: z.number().int().min(100).max(3_600_000),
    /** Items per data-import request; more is refused as a whole with 400. @default 50 (documented) */
    itemsPerRequest: z.number().int().min(1).max(10_000),
    /** Messages whose sentAt is older than now minus this many days are refused. @default 183 (documented: about 6 months) */
    retentionDays: z.number().min(0).max(100_000),
    /** Chat-interface (list) requests per app per window. @default 10000 (documented core-operation limit) */
    chatRequestsPerMinute: z.number().int().min(1).max(10_000_000),
    /** Group messages need the sender to be a member of the group. @default false (see README) */
    requireGroupMembership: z.boolean(),
    /** Deliver webhooks for imported data (undocumented whether the platform does). @default false */
    webhooksOnImport: z.boolean(),
    /** Roles that exist in the app besides `default`; a user imported with another role is refused. @default [] */
    roles: z.array(z.string().min(1).max(LIMITS.ID_MAX)).max(25),
    /**
     * The data-import endpoints on which a request holding a bad row (any per-item refusal other
     * than "already exists") writes its good rows and then answers 500 `ERR_EXCEPTION` without
     * per-item results. `[]` is the kinder per-item answer in a 200.
     * @default ['messages'] (documented by the vendor's migration guidance for message rows)
     */
    badRow500: z.array(z.enum(ENTITIES)).max(ENTITIES.length),
    /**
     * On a `badRow500` endpoint, which good rows of a request holding a bad row are written before
     * the 500: `all-good-rows` (as published: "after the good rows have already imported"), or
     * `stop-at-bad-row` (assumed, the stricter reading: the rows before the first bad row in
     * request order, none after it).
     * @default 'all-good-rows'
     */
    badRowCommit: z.enum(['all-good-rows', 'stop-at-bad-row']),
    /**
     * Send `X-RateLimit-*` on every import answer and `Retry-After` on a 429. The data-import
     * documentation promises none: off, the wait is only in the 429's text.
     * @default false (as published; chatferry's loader reads the wait from the text)
     */
    rateLimitHeaders: z.boolean(),
    /** Groups a user can be a member of; a member import beyond is refused. @default 2000 (documented) */
    maxGroupsPerUser: z.number().int().min(1).max(10_000_000),
    /** Members of one group; a member import beyond is refused with `ERR_NO_VACANCY`. @default 100000 (documented) */
    maxMembersPerGroup: z.number().int().min(1).max(100_000_000),
    /** A webhook receiver must answer within this many ms, or the attempt failed. @default 2000 (documented: 2 seconds) */
    webhookTimeoutMs: z.number().int().min(1).max(120_000),
    /**
     * Delays before the retries of a failed delivery to a webhook with `retryOnFailure`, each after
     * the previous attempt failed. @default [10000, 30000] (documented: after 10 s, after 30 s)
     */
    webhookRetryDelaysMs: z.array(z.number().int().min(0).max(3_600_000)).max(10),
    /**
     * Strict rehearsal of attachments (issue 27): every attachment URL of an imported message is
     * fetched over HTTP (HEAD, or a one-byte GET where HEAD is refused), as a customer's clients
     * would, and a message with one that does not answer 2xx within 5 s is refused with
     * `ERR_ATTACHMENT_UNREACHABLE` naming it — so a rehearsal shows broken links before the cutover.
     * The platform stores the URL by reference and never fetches it (assumed from its docs: an
     * attachment is `{url, name, mimeType, extension, size}` with a publicly reachable URL), so the
     * code is the sandbox's own. @default false
     */
    checkAttachmentUrls: z.boolean(),
    faults: FaultSettings,
    chatFaults: ChatFaultSettings,
  })
  .strict()
export type AppSettings = z.infer<typeof AppSettings>

/** A change to the settings: every field optional, `faults` and `faults.latencyMs` merged field by field. */
export const AppSettingsPatch = AppSettings.omit({ faults: true, chatFaults: true })
  .partial()
  .extend({
    chatFaults: ChatFaultSettings.partial().optional(),
    faults: FaultSettings.omit({ latencyMs: true, seed: true })
      .partial()
      .extend({
        // null clears the seed (back to Math.random).
        seed: z.number().int().nullable().optional(),
        latencyMs: z
          .object({ min: z.number().int().min(0).max(600_000), max: z.number().int().min(0).max(600_000) })
          .partial()
          .strict()
          .optional(),
      })
      .strict()
      .optional(),
  })
  .strict()
export type AppSettingsPatch = z.input<typeof AppSettingsPatch>

/** The documented limits and the sandbox's default choices. */
export const DEFAULT_APP_SETTINGS: AppSettings = Object.freeze({
  requestsPerMinute: LIMITS.IMPORT_REQUESTS_PER_MINUTE,
  windowMs: 60_000,
  itemsPerRequest: LIMITS.IMPORT_ITEMS_MAX,
  retentionDays: 183,
  chatRequestsPerMinute: 10_000,
  requireGroupMembership: false,
  webhooksOnImport: false,
  roles: [],
  badRow500: ['messages'],
  badRowCommit: 'all-good-rows',
  rateLimitHeaders: false,
  maxGroupsPerUser: LIMITS.GROUPS_PER_USER_MAX,
  maxMembersPerGroup: LIMITS.MEMBERS_PER_GROUP_MAX,
  webhookTimeoutMs: 2_000,
  webhookRetryDelaysMs: [10_000, 30_000],
  checkAttachmentUrls: false,
  faults: { extra429: 0, partialCommit500: 0, partialCommitShape: 'subset', dropBeforeCommit: 0, dropAfterCommit: 0, latencyMs: { min: 0, max: 0 } },
  chatFaults: { extra429: 0, dropBeforeCommit: 0, dropAfterCommit: 0 },
}) as AppSettings

/**
 * Applies a patch; throws the zod error when the patch or the result is invalid (e.g. a latency
 * min above the max).
 */
export function applySettingsPatch(base: AppSettings, patch: unknown): AppSettings {
  const p = AppSettingsPatch.parse(patch)
  const { faults: faultPatch, chatFaults: chatFaultPatch, ...rest } = p
  const faults: Record<string, unknown> = { ...base.faults }
  if (faultPatch !== undefined) {
    const { latencyMs, seed, ...probabilities } = faultPatch
    Object.assign(faults, probabilities)
    if (seed === null) {
      delete faults.seed
    } else if (seed !== undefined) {
      faults.seed = seed
    }
    if (latencyMs !== undefined) {
      faults.latencyMs = { ...base.faults.latencyMs, ...latencyMs }
    }
  }
  return AppSettings.parse({ ...base, ...rest, faults, chatFaults: { ...base.chatFaults, ...chatFaultPatch } })
}
