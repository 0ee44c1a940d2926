/**
 * The dry run behind `chatferry plan`: the planning loop of `plan-job.ts` with a sink that writes
 * no item state, no id decision and no cursor. Each mapped item is classified against the ledger
 * instead:
 *
 * - **new**: the ledger has never seen it;
 * - **pending**: planned or in flight, same payload; **pendingChanged**: planned, payload changed;
 * - **replanned**: rejected or skipped before, mappable now;
 * - **loadedUnchanged**: on the platform with the same payload; **loadedChanged**: on the platform,
 *   but the source changed since (never resent through the import) — with the fields that changed
 *   and the update intents a delta would record for it (`change-intents.ts`, by `changes:` policy).
 *
 * Loaded items whose row is gone from the source are counted like a delta would (users, groups and
 * members; messages with `detectDeletes`): the source's keys go into a temporary table too.
 *
 * Every entity is read in full from the source (no cursor is honoured), so the report describes
 * the whole migration as it would run now. Thread parents of earlier pages are kept in a temporary
 * table of the dry run's own connection (memory stays flat for millions of messages) and vanish
 * with it: `store.dryRun` (`src/state/dry-run-ledger.ts`), which only reads the ledger's tables.
 *
 * The `apply` intents are asked, read-only, which the conflict policy (`changes.conflicts`) would
 * hold back, drop or send over a change made on the platform, with the rule a delta records by.
 *
 * Parts: the sink (`dry-run-sink.ts`), the verdict per item (`classify-items.ts`), the changed
 * fields of a changed payload (`changed-fields.ts`), the conflict preview (`conflict-preview.ts`).
 */
import type { AdjustFn, Policies } from '../../mappings/index.ts'
import type { SourceSession } from '../model/connector.ts'
import type { LegacyEntity } from '../model/index.ts'
import type { LedgerStore } from '../state/index.ts'
import type { ChangesConfig } from './changes-config.ts'
import { type DryRunEntity, emptyDryRunEntity } from './classify-items.ts'
import { createDryRunSink } from './dry-run-sink.ts'
import type { MemberLimitsConfig } from './member-limits.ts'
import { planJob, type PlanJobOptions, type PlanJobSummary } from './plan-job.ts'

export { changedFields } from './changed-fields.ts'
export { type DryRunEntity, type Fate, type FateCounts, FATES } from './classify-items.ts'

export interface DryRunResult {
  readonly summary: PlanJobSummary
  readonly entities: Record<LegacyEntity, DryRunEntity>
  /** Item keys that will be sent (new, pending, pendingChanged, replanned) per entity, when collected. */
  readonly toSend?: Record<LegacyEntity, Set<string>>
}

export interface DryRunOptions {
  readonly jobId: string
  /** The ledger's dry-run session: the store's, or one over another process's answers. */
  readonly store: Pick<LedgerStore, 'dryRun'>
  readonly session: SourceSession
  readonly policies: Policies
  /** `files.mode`: with `rehost` the report inventories the files (`files-inventory.ts`). */
  readonly files?: { readonly mode: 'rehost' | 'reference' | 'omit'; readonly maxBytes?: number }
  readonly adjust?: AdjustFn
  readonly now: number
  readonly pageSize?: number
  readonly changedSince?: number
  /**
   * Keep the target keys of the items to send (for the pre-flight against the target, which
   * checks them against the platform's lists). Users, groups and members only: messages are many.
   */
  readonly collectKeys?: boolean
  /** The platform's member limits (`target.limits`). */
  readonly memberLimits?: MemberLimitsConfig
  /** What changes of loaded items would become (`changes:`). @default the defaults */
  readonly changes?: ChangesConfig
  /** Also compare the messages' keys with the ledger (`plan --detect-deletes`). */
  readonly detectDeletes?: boolean
  readonly signal?: AbortSignal
  /** Called after every page, for progress (planJob's onPage). */
  readonly onPage?: PlanJobOptions['onPage']
}

/** Runs the dry run; the ledger's items, cursors and id map are only read. */
export async function dryRunPlan(options: DryRunOptions): Promise<DryRunResult> {
  const { jobId, store } = options
  // One connection for the whole run: the temporary table of thread parents lives on it.
  return store.dryRun.session(async (session) => {
    const entities = {} as Record<LegacyEntity, DryRunEntity>
    const toSend = options.collectKeys
      ? ({ users: new Set(), groups: new Set(), members: new Set(), messages: new Set() } as Record<LegacyEntity, Set<string>>)
      : undefined
    for (const e of ['users', 'groups', 'members', 'messages'] as const) {
      entities[e] = emptyDryRunEntity()
    }
    const summary = await planJob({
      jobId,
      session: options.session,
      policies: options.policies,
      ...(options.files ? { files: options.files } : {}),
      now: options.now,
      sink: createDryRunSink({ jobId, session, entities, toSend }, options.policies.threads.quoteParent !== false),
      // The dry run reads every entity in full, so the source's own count must match what it read.
      countSource: true,
      ...(options.pageSize !== undefined ? { pageSize: options.pageSize } : {}),
      ...(options.changedSince !== undefined ? { changedSince: options.changedSince } : {}),
      ...(options.adjust ? { adjust: options.adjust } : {}),
      ...(options.memberLimits ? { memberLimits: options.memberLimits } : {}),
      ...(options.changes ? { changes: options.changes } : {}),
      detectDeletes: options.detectDeletes === true,
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.onPage ? { onPage: options.onPage } : {}),
    })
    return { summary, entities, ...(toSend ? { toSend } : {}) }
  })
}
