/**
 * The JSON reports of `chatferry plan` and `chatferry verify`, as zod schemas: the documented,
 * versioned contract for CI gates and dashboards (see README.md in this folder). A change that
 * removes or renames a field, or changes its meaning, increments {@link REPORT_SCHEMA_VERSION};
 * adding a field does not.
 */
import { z } from 'zod'

import { FilesPlan } from './files-plan.ts'
import { FilesVerify } from './verify-files.ts'

/** Version of the report format. */
export const REPORT_SCHEMA_VERSION = 1

const ENTITY_NAMES = ['users', 'groups', 'members', 'messages'] as const

/** What `changes.conflicts` does with an update of an item changed on the platform (src/state/conflict-hold.ts). */
export const CONFLICT_OUTCOMES = ['conflict', 'dropped', 'overwrites'] as const

/** A count with up to five sample legacy ids. */
export const ReasonCount = z.object({ count: z.number().int().nonnegative(), samples: z.array(z.string()) })
export type ReasonCount = z.infer<typeof ReasonCount>

const perEntity = <T extends z.ZodType>(t: T) => z.object({ users: t, groups: t, members: t, messages: t })

/** What identifies a report, so two reports can be compared. */
export const ReportHeader = z.object({
  schemaVersion: z.literal(REPORT_SCHEMA_VERSION),
  runId: z.string(),
  jobId: z.string(),
  appId: z.string(),
  region: z.string(),
  chatferryVersion: z.string(),
  /** sha256 of the resolved configuration with every secret removed (hex). */
  configHash: z.string(),
  /** When the source snapshot was taken (ISO 8601), or null when the source was not read. */
  sourceSnapshotAt: z.string().nullable(),
  /** When the report was made (ISO 8601). */
  generatedAt: z.string(),
  durationMs: z.number().nonnegative(),
})

export const FateCounts = z.object({
  /** Not in the ledger: will be created. */
  new: z.number().int(),
  /** Planned or in flight with the same payload: will be sent. */
  pending: z.number().int(),
  /** Planned, but the payload changed since it was planned: will be sent with the new payload. */
  pendingChanged: z.number().int(),
  /** Rejected or skipped before, mappable now: will be sent. */
  replanned: z.number().int(),
  /** On the platform with the same payload: nothing to do. */
  loadedUnchanged: z.number().int(),
  /** On the platform, but the source changed since loading: not resent (see changedFields). */
  loadedChanged: z.number().int(),
})

export const KeySample = z.object({ legacyId: z.string(), targetKey: z.string() })

/** Update intents of one kind and policy: how many, and samples with their reason. */
export const UpdateCount = z.object({
  count: z.number().int().nonnegative(),
  samples: z.array(z.object({ legacyId: z.string(), targetKey: z.string(), reason: z.string() })),
})
export type UpdateCount = z.infer<typeof UpdateCount>

/**
 * A sampled reject: its legacy id, the key the ledger keeps it under (`~legacy:<id>…` for a row
 * that never became an item of the platform's), the field (path) at fault and the problem.
 */
export const RejectSample = z.object({ legacyId: z.string(), targetKey: z.string(), field: z.string(), problem: z.string() })

export const EntityPlan = z.object({
  /** Rows the connector read (unreadable rows included): records + problems. */
  sourceRows: z.number().int(),
  /** Rows that became records. */
  records: z.number().int().default(0),
  /** Rows that could not (unreadable, NULL or duplicate key), each rejected with its reason. */
  problems: z.number().int().default(0),
  /**
   * `SELECT count(*)` of the entity's query in the same snapshot (null: not counted). When it is not
   * `sourceRows`, rows were missed or read twice: the report says so loudly (gate `countMismatch`).
   */
  sourceCount: z.number().int().nullable().default(null),
  /** Import items mapped from them (a message split in parts counts each part; extra items included). */
  items: z.number().int(),
  fates: FateCounts,
  /** new + pending + pendingChanged + replanned. */
  toCreate: z.number().int(),
  /** Of toCreate, keys the pre-flight found already on the platform (null: not checked). */
  alreadyPresent: z.number().int().nullable(),
  /** Field paths that differ in loaded-but-changed and pending-changed items. */
  changedFields: z.record(z.string(), ReasonCount),
  skipped: z.object({ total: z.number().int(), byReason: z.record(z.string(), ReasonCount) }),
  rejected: z.object({
    total: z.number().int(),
    byReason: z.record(z.string(), ReasonCount),
    /** The samples of `byReason`, per reason, with key, field and problem (added in schema version 1; absent in older reports). */
    samples: z.record(z.string(), z.array(RejectSample)).default({}),
  }),
  /** `policy: outcome` → count + samples (id renames, clamps, placeholders, …). */
  outcomes: z.record(z.string(), ReasonCount),
  /** References to unknown users, groups or thread parents. */
  referential: z.record(z.string(), ReasonCount),
  /** Extra items by reason (users only: placeholders, the system user). */
  extras: z.record(z.string(), z.number().int()),
  /** Records changed since the previous plan's snapshot (null: no previous plan). */
  changedSincePrevious: ReasonCount.nullable(),
  samples: z.record(z.string(), z.array(KeySample)),
  /** Import requests and seconds at the quota for toCreate. */
  cost: z.object({ requests: z.number().int(), seconds: z.number() }),
  /**
   * Update intents a delta would record for loaded items (changes and vanished rows), `kind →
   * policy (apply | report | ignore) → count + samples` (`changes:`; added in schema version 1,
   * absent in older reports: none).
   */
  updates: z.record(z.string(), z.record(z.string(), UpdateCount)).default({}),
  /**
   * Of those, the `apply` intents whose item changed on the platform after chatferry last wrote it
   * (an event `chatferry webhooks receive` stored), `kind → outcome → count + samples`, the outcome
   * being what `changes.conflicts` would do: `conflict` (report: held back), `dropped`
   * (platform-wins) or `overwrites` (source-wins: applied over the platform's change). Each sample's
   * reason names the platform's trigger and when it was received, as a delta would record it. Added
   * in schema version 1; absent in older reports (none).
   */
  conflicts: z.record(z.string(), z.partialRecord(z.enum(CONFLICT_OUTCOMES), UpdateCount)).default({}),
  /** Loaded items whose legacy row is gone from the source (null: not compared; messages only with `--detect-deletes`). */
  vanished: z.number().int().nullable().default(null),
  /** True when so many were gone that a delta would record none of them (`changes.vanished.maxShare`). */
  vanishedRefused: z.boolean().default(false),
})
export type EntityPlan = z.infer<typeof EntityPlan>

export const TargetCheck = z.object({
  checkedAt: z.string(),
  /** Every check passed. */
  ok: z.boolean(),
  baseUrl: z.string(),
  apiKey: z.object({ works: z.boolean(), fullAccess: z.boolean().nullable(), error: z.string().nullable() }),
  region: z.object({ configured: z.string(), observed: z.string().nullable(), matches: z.boolean().nullable(), note: z.string() }),
  /** Keys about to be created that already exist on the platform. */
  existing: perEntity(z.object({ count: z.number().int(), checked: z.boolean(), samples: z.array(z.string()) })),
  chatRequests: z.number().int(),
  problems: z.array(z.string()),
})
export type TargetCheck = z.infer<typeof TargetCheck>

export const PlanDiff = z.object({
  previousRunId: z.string(),
  previousGeneratedAt: z.string(),
  previousSnapshotAt: z.string().nullable(),
  entities: perEntity(
    z.object({
      sourceRows: z.number().int(),
      items: z.number().int(),
      toCreate: z.number().int(),
      skipped: z.number().int(),
      rejected: z.number().int(),
      /** Reason → change in count (only reasons whose count changed). */
      rejectedByReason: z.record(z.string(), z.number().int()),
      skippedByReason: z.record(z.string(), z.number().int()),
      /** Records changed or added since the previous snapshot, with samples. */
      changedSincePrevious: ReasonCount.nullable(),
    }),
  ),
  /** The same, in sentences ("+3 messages to create, 1 new groups"). */
  lines: z.array(z.string()),
})
export type PlanDiff = z.infer<typeof PlanDiff>

export const RetentionEdgeReport = z.object({
  /** False when `retention.oldMessages: send` (extended retention: nothing ages out). */
  checked: z.boolean(),
  messages: z.number().int(),
  agingOut: z.number().int(),
  oldestAgingOut: z.string().nullable(),
  newestAgingOut: z.string().nullable(),
  firstMessageSeconds: z.number(),
  lastMessageSeconds: z.number(),
  advice: z.string(),
})

export const Gate = z.object({ expression: z.string(), value: z.number(), passed: z.boolean() })

export const PlanReport = ReportHeader.extend({
  kind: z.literal('plan'),
  /** The policies the plan mapped with (no secrets live there). */
  policies: z.record(z.string(), z.unknown()),
  /** The `changes:` policies the update intents were classified with (absent in older reports). */
  changes: z.record(z.string(), z.unknown()).nullable().default(null),
  entities: perEntity(EntityPlan),
  ids: z.object({ normalised: z.number().int(), collisions: ReasonCount }),
  placeholders: z.object({
    count: z.number().int(),
    messages: z.number().int(),
    /** Up to 100, most messages first. */
    top: z.array(z.object({ uid: z.string(), legacyId: z.string(), messages: z.number().int() })),
  }),
  joinedAt: z.object({ clamped: ReasonCount, omitted: ReasonCount, rejected: z.number().int() }),
  /**
   * Rejects an operator accepted (`chatferry accept-rejects`), per entity, as the ledger holds them
   * when the plan ran: judged, they no longer make a run exit 3. Absent when there are none (or the
   * ledger was not asked).
   */
  acceptedRejects: z.object({ entities: perEntity(z.number().int()), command: z.string() }).optional(),
  /**
   * Creation times chatferry chose because the source gives none (added in schema version 1; absent
   * in older reports, read as none). `groups`: groups given one (count + samples), `byRule`: how
   * (`before-first-join`, `before-first-message`, `before-source-earliest`, `before-run`,
   * `kept-from-ledger`; `mappings/README.md`). No user gets one: the platform compares no import
   * field with a user's createdAt.
   */
  derivedCreatedAt: z
    .object({ groups: ReasonCount, byRule: z.record(z.string(), z.number().int()) })
    .default({ groups: { count: 0, samples: [] }, byRule: {} }),
  retention: z.object({
    retentionDays: z.number().int(),
    oldMessages: z.string(),
    windowStart: z.string(),
    beyondRetention: z.number().int(),
    months: z.array(z.object({ month: z.string(), messages: z.number().int(), beyondRetention: z.number().int() })),
    /** Messages that will age out before the load at the quota reaches them (`src/plan/retention-edge.ts`); absent in older reports. */
    edge: RetentionEdgeReport.optional(),
  }),
  cost: z.object({
    quota: z.object({ requestsPerMinute: z.number(), itemsPerRequest: z.number(), source: z.string() }),
    requests: z.number().int(),
    seconds: z.number(),
    /** If the load started when the report was made. */
    startIfNow: z.string(),
    finishIfNow: z.string(),
    /** Entities load one after the other (users → groups → members → messages). */
    timeline: z.array(z.object({ entity: z.enum(ENTITY_NAMES), startSeconds: z.number(), seconds: z.number(), requests: z.number().int() })),
  }),
  policyOutcomes: z.record(z.string(), z.record(z.string(), z.number().int())),
  /** The job's files under `files.mode` (issue 27; absent in older reports and under omit). */
  files: FilesPlan.optional(),
  target: TargetCheck.nullable(),
  diff: PlanDiff.nullable(),
  gates: z.array(Gate),
})
export type PlanReport = z.infer<typeof PlanReport>

export const MISMATCH_KINDS = ['missing', 'unexpected', 'duplicate', 'field', 'count', 'source-count'] as const

export const Mismatch = z.object({
  entity: z.enum(ENTITY_NAMES),
  /**
   * `missing`: done in the ledger, absent on the platform; `unexpected`: on the platform, not done
   * in the ledger; `duplicate`: listed twice; `field`: a sampled message differs; `count`: a
   * conversation's message count differs; `source-count`: the source and the ledger disagree.
   */
  kind: z.enum(MISMATCH_KINDS),
  targetKey: z.string().nullable(),
  legacyId: z.string().nullable(),
  field: z.string().nullable(),
  expected: z.unknown(),
  actual: z.unknown(),
  /** True when the ledger explains it (not loaded yet, changed in the source after loading, …). */
  explained: z.boolean(),
  note: z.string(),
})
export type Mismatch = z.infer<typeof Mismatch>

export const EntityVerify = z.object({
  /** Items the ledger says are on the platform. */
  ledgerDone: z.number().int(),
  /** Items the ledger still has to send (planned, in flight, rejected). */
  ledgerOpen: z.number().int(),
  /** Found on the platform. */
  platform: z.number().int(),
  missing: z.number().int(),
  unexpected: z.number().int(),
  duplicates: z.number().int(),
  /** Source rows vs ledger records (null: source not read). */
  source: z.object({ rows: z.number().int(), ledgerRecords: z.number().int() }).nullable(),
})

/**
 * Verify's sign-off: per entity, what the latest plan report said (null: no plan report for the
 * job), what the ledger holds now, and what verify counted on the platform.
 */
export const ActualVsPlan = z.object({
  planRunId: z.string().nullable(),
  planGeneratedAt: z.string().nullable(),
  /** Delta runs started since the plan, whose new items count as planned (absent in older reports). */
  deltasSince: z.number().int().optional(),
  entities: perEntity(
    z.object({
      /** create: to send; loaded: already loaded when the plan ran (unchanged or changed since). */
      plan: z
        .object({
          create: z.number().int(),
          loaded: z.number().int(),
          skipped: z.number().int(),
          rejected: z.number().int(),
          /** New items the delta runs since the plan planned (absent in older reports). */
          createdSince: z.number().int().optional(),
        })
        .nullable(),
      ledger: z.object({
        created: z.number().int(),
        alreadyPresent: z.number().int(),
        skipped: z.number().int(),
        rejected: z.number().int(),
        remaining: z.number().int(),
      }),
      platform: z.number().int(),
    }),
  ),
})
export type ActualVsPlan = z.infer<typeof ActualVsPlan>

export const VerifyReport = ReportHeader.extend({
  kind: z.literal('verify'),
  entities: perEntity(EntityVerify),
  messages: z.object({
    conversations: z.number().int(),
    conversationsMismatched: z.number().int(),
    /** Conversations listed again message by message: those whose count differs, and those with the same count whose legacy ids differ (at most 200). */
    conversationsRelisted: z.number().int().optional(),
    sampleRequested: z.number().int(),
    sampleCompared: z.number().int(),
    /** The compared ones by how they were matched: chatferry's legacy id in `data.metadata`, or the fingerprint (sender, receiver, sentAt, text). */
    sampleComparedBy: z.object({ legacyId: z.number().int(), fingerprint: z.number().int() }).optional(),
    /** Sampled messages no listed message matched: not compared, each listed as a mismatch. */
    sampleUnmatched: z.number().int().optional(),
    /** Listed messages that carry chatferry's legacy id (`legacyId`), and those matched by fingerprint only (`fingerprint`). */
    listedBy: z.object({ legacyId: z.number().int(), fingerprint: z.number().int() }).optional(),
    fields: z.array(z.string()),
    /**
     * Messages are matched one by one (by legacy id, else fingerprint): always true since the
     * message list is read without `muid`. Reports written before said false when the list lacked `muid`.
     */
    idsComparable: z.boolean(),
  }),
  chat: z.object({ requests: z.number().int(), requestsPerMinute: z.number(), rateLimited: z.number().int() }),
  mismatches: z.array(Mismatch),
  /** Mismatches beyond the listed ones (the list is capped). */
  mismatchesNotListed: z.number().int(),
  totals: z.object({ mismatches: z.number().int(), unexplained: z.number().int() }),
  /** The sign-off: plan vs ledger vs platform (absent in reports written before it existed). */
  actualVsPlan: ActualVsPlan.optional(),
  /**
   * Rejects an operator accepted (`chatferry accept-rejects`), per entity: not on the platform by
   * decision, so no mismatch; `command` lists them with who accepted them, when and why. Absent
   * when there are none (and in reports written before accepted rejects existed).
   */
  acceptedRejects: z.object({ entities: perEntity(z.number().int()), command: z.string() }).optional(),
  /** The files lane's copies (issue 27): reachable, a sample hashed; absent when the job has no files. */
  files: FilesVerify.optional(),
  /**
   * What `verify --replan` planned again in the ledger: done items absent on the platform (imported
   * again) and done removals whose item is still there (sent again); `command` sends them. Absent
   * without `--replan`.
   */
  replanned: z.object({ items: z.number().int(), removals: z.number().int(), command: z.string() }).optional(),
})
export type VerifyReport = z.infer<typeof VerifyReport>
