/**
 * The types the planning loop's files share: where it puts its results (a {@link PlanSink}, one
 * {@link SinkPage} at a time), how a job is planned ({@link PlanJobOptions}) and the state of one
 * run ({@link PlanRun}, started by `plan-run.ts`). Here so that the loop (`plan-job.ts`,
 * `plan-run.ts`, `plan-entity.ts`, `plan-page.ts`, `map-page.ts`, `key-reconciliation.ts`) and the
 * sinks (`ledger-sink.ts`, `dry-run-sink.ts`) need not import each other for them.
 */
import type { Logger } from 'pino'

import type {
  AdjustFn,
  IdMapEntry,
  MemoryIdRegistry,
  OutcomeCounts,
  PlannedGroup,
  PlannedMessage,
  PlannedUser,
  Policies,
  SkippedRef,
} from '../../mappings/index.ts'
import type { Cursor, SourceSession } from '../model/connector.ts'
import type { LegacyEntity } from '../model/index.ts'
import type {
  CursorState,
  KeyComparison,
  LedgerStore,
  PlanCounts,
  PlannedChanges,
  PlannedItem,
  RejectedItem,
  SkippedItem,
  VanishedDecider,
  VanishedGate,
  VanishedOutcome,
} from '../state/index.ts'
import type { ChangePolicies } from './change-types.ts'
import type { ChangesConfig } from './changes-config.ts'
import type { DeltaConfig } from './delta-config.ts'
import type { ExtrasTally } from './extras-tally.ts'
import type { FilesInventory } from './files-inventory.ts'
import type { GroupCreation } from './group-creation.ts'
import type { KnownRecords } from './known-records.ts'
import type { MemberLimits, MemberLimitsConfig, MembershipCounts } from './member-limits.ts'
import type { EntityPlanSummary } from './plan-summary.ts'

/** One page as the loop hands it to a sink. */
export interface SinkPage {
  readonly items: readonly PlannedItem[]
  readonly skips: readonly SkippedItem[]
  readonly rejects: readonly RejectedItem[]
  readonly cursor: Cursor
  readonly watermark: number | undefined
  /** Messages of this page as replies will look them up (thread parents), by legacy id. */
  readonly messages: ReadonlyMap<string, PlannedMessage | SkippedRef>
  /** How changes of loaded items become update intents (`change-classifier.ts`), counted into the entity's summary. */
  readonly changes: PlannedChanges
}

/** Where the planning loop puts its results. */
export interface PlanSink {
  /** True when cursors are honoured and saved (resume); false: every entity is read in full. */
  readonly resumable: boolean
  /**
   * True when a page may be mapped while the page before it is written (`page-pipeline.ts`): the
   * sink's lookups ({@link parents}) then run beside a write, so they must not share its
   * transaction. Absent: one page at a time.
   */
  readonly mapsWhileWriting?: boolean
  /** Id decisions made by earlier runs. */
  loadIds(): Promise<IdMapEntry[]>
  /** Persists decisions made since the last call (the dry run keeps them in memory only). */
  saveIds(ids: MemoryIdRegistry): Promise<void>
  /** Users and groups already planned (resume); the dry run starts empty. */
  loadUsers(metadataKey: string): Promise<Map<string, PlannedUser | SkippedRef>>
  loadGroups(): Promise<Map<string, PlannedGroup | SkippedRef>>
  /**
   * The groups the ledger holds, also when the sink does not resume (the dry run): a creation time
   * chatferry chose for a group is kept by every later plan and run. Absent: none.
   */
  ledgerGroups?(): Promise<Map<string, PlannedGroup | SkippedRef>>
  /** Memberships already planned per group and user (resume); absent: none (the dry run reads all). */
  loadMemberships?(): Promise<MembershipCounts>
  /** Of these legacy member ids, those {@link loadMemberships} counted (a delta re-reads them). */
  countedMembers?(legacyIds: readonly string[]): Promise<Set<string>>
  /** Thread parents planned on earlier pages. */
  parents(legacyIds: readonly string[], nameOfUid: (uid: string) => string | undefined): Promise<Map<string, PlannedMessage | SkippedRef>>
  getCursor(entity: LegacyEntity): Promise<CursorState | undefined>
  /** Extra users (placeholders, the system user), each once. */
  writeExtras(items: readonly PlannedItem[]): Promise<PlanCounts>
  writePage(entity: LegacyEntity, page: SinkPage): Promise<PlanCounts>
  /** The read of `entity` is complete. */
  finishEntity(entity: LegacyEntity, cursor: Cursor | undefined, watermark: number): Promise<void>
  /**
   * The key-set comparison of `entity`: the source's legacy ids (`SourceSession.readKeys`) against
   * the ledger's loaded items; each page of vanished items is handed to `decide`, whose intents
   * the ledger records (the dry run only counts them). Absent: not compared.
   */
  vanished?(
    entity: LegacyEntity,
    sourceKeys: AsyncIterable<readonly string[]>,
    decide: VanishedDecider,
    allow?: VanishedGate,
  ): Promise<VanishedOutcome>
  /**
   * One keys-only read of `entity` compared for what is asked: the vanished items (as
   * {@link vanished}) and the source's keys the ledger never planned (the key reconciliation:
   * `key-reconciliation.ts`). Absent: no key reconciliation (the dry run reads every row anyway).
   */
  compareKeys?(
    entity: LegacyEntity,
    sourceKeys: AsyncIterable<readonly string[]>,
    want: { readonly vanished?: { readonly decide: VanishedDecider; readonly allow?: VanishedGate }; readonly unplanned?: boolean },
  ): Promise<KeyComparison>
  /** Deltas that completed their read since the job's last key reconciliation. */
  deltasSinceReconciliation?(): Promise<number>
  /** Records that count after a delta's read (0: this one reconciled). */
  recordDeltasSinceReconciliation?(deltas: number): Promise<void>
}

/**
 * How to plan a job: into the ledger `store` (the default sink), or into a given `sink` (the dry
 * run's, which needs no store: it may read a ledger another process holds).
 */
export type PlanJobOptions = PlanJobSettings &
  ({ readonly store: LedgerStore; readonly sink?: PlanSink } | { readonly sink: PlanSink; readonly store?: undefined })

export interface PlanJobSettings {
  readonly jobId: string
  readonly session: SourceSession
  readonly policies: Policies
  /** `files.mode` (issue 27): `rehost` records each message's files; `omit` sends none. @default reference */
  readonly files?: { readonly mode: 'rehost' | 'reference' | 'omit'; readonly maxBytes?: number }
  readonly adjust?: AdjustFn
  /** The run's clock, epoch ms (retention and joinedAt are judged against it). */
  readonly now: number
  /** The platform's member limits; memberships beyond are rejected (`member-limits.ts`). @default none */
  readonly memberLimits?: MemberLimitsConfig
  /** @default 1000 */
  readonly pageSize?: number
  /**
   * `full`: resume each entity from its cursor, skip entities whose read completed.
   * `delta`: read only rows changed since each entity's watermark (after a completed full read).
   * @default 'full'
   */
  readonly mode?: 'full' | 'delta'
  /**
   * Records changed at or after this time (epoch ms; `updatedAt`, else a message's `sentAt`) are
   * counted with samples in {@link EntityPlanSummary.changedSince} (the previous plan's snapshot).
   */
  readonly changedSince?: number
  /**
   * After each entity read from its beginning, count the source's rows in the same snapshot
   * (`SourceSession.count`) into {@link EntityPlanSummary.sourceCount}, to confirm none was missed.
   */
  readonly countSource?: boolean
  /** What to do with changes of loaded items (`changes:`). @default every default of `changes-config.ts` */
  readonly changes?: ChangesConfig
  /**
   * Also compare the messages' keys with the ledger (a full keys-only scan of the messages table;
   * `run --delta --detect-deletes`). Users, groups and members are compared on every delta.
   */
  readonly detectDeletes?: boolean
  /** How far back before each watermark a delta reads, and how often it reconciles the keys (`delta:`). @default every default of `delta-config.ts` */
  readonly delta?: DeltaConfig
  /**
   * Delta runs: plan every source key the ledger never planned now, whatever
   * `delta.reconcileKeysEvery` says (`run --delta --reconcile-keys`, the final delta).
   */
  readonly reconcileKeys?: boolean
  readonly signal?: AbortSignal
  readonly logger?: Logger
  /** Called after every page, for progress lines. */
  readonly onPage?: (entity: LegacyEntity, summary: EntityPlanSummary) => void
}

/** Messages of one calendar month (UTC) by their sent time. */
export interface MonthCount {
  /** Readable messages sent in the month. */
  messages: number
  /** Of those, older than the retention window. */
  beyondRetention: number
}

/** The state of one planning run, shared by its entities and pages: id decisions, lookups, tallies. */
export interface PlanRun {
  readonly options: PlanJobOptions
  readonly sink: PlanSink
  readonly pageSize: number
  readonly mode: 'full' | 'delta'
  /** The start of the retention window (epoch ms) the run judges against. */
  readonly retentionStart: number
  readonly ids: MemoryIdRegistry
  readonly known: KnownRecords
  /** Times for groups the source gives no creation time. */
  readonly groupCreation: GroupCreation
  readonly outcomes: OutcomeCounts
  readonly entities: Record<LegacyEntity, EntityPlanSummary>
  readonly months: Record<string, MonthCount>
  readonly extras: ExtrasTally
  /** Memberships counted per user and group against the platform's limits; undefined: not checked. */
  readonly memberLimits: MemberLimits | undefined
  /** What changes of loaded items become (`changes:` and the mapping policies they depend on). */
  readonly changePolicies: ChangePolicies
  /** True when this delta plans the source's keys the ledger never planned (`key-reconciliation.ts`). */
  readonly reconcileKeys: boolean
  /** Deltas since the job's last key reconciliation, before this one; undefined when not a delta into a ledger. */
  readonly deltasSinceReconciliation: number | undefined
  /** The distinct files of the messages read (`files.mode` rehost or reference); undefined under omit. */
  readonly files: FilesInventory | undefined
}
