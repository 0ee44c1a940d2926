/** The state of one planning run, shared by its entities and pages: id decisions, lookups, tallies. */
import { MemoryIdRegistry, type OutcomeCounts } from '../../mappings/index.ts'
import { LEGACY_ENTITIES, type LegacyEntity } from '../model/index.ts'
import type { ChangePolicies } from './change-intents.ts'
import { DEFAULT_CHANGES } from './changes-config.ts'
import { ExtrasTally } from './extras-tally.ts'
import { FilesInventory } from './files-inventory.ts'
import { GroupCreation } from './group-creation.ts'
import { reconciliationOf } from './key-reconciliation.ts'
import { KnownRecords } from './known-records.ts'
import { createLedgerSink } from './ledger-sink.ts'
import { MemberLimits } from './member-limits.ts'
import type { MonthCount, PlanJobOptions, PlanSink } from './plan-job.ts'
import { emptySummary, type EntityPlanSummary } from './plan-summary.ts'

/** Rows per source page. @default 1000 */
export const DEFAULT_PAGE_SIZE = 1000
const DAY_MS = 86_400_000

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

/** Starts a run: replays the id decisions and loads the users and groups the sink already knows. */
export async function startPlanRun(options: PlanJobOptions): Promise<PlanRun> {
  const { policies } = options
  // Where results go: the given sink, else the ledger.
  const sink = options.store === undefined ? options.sink : (options.sink ?? createLedgerSink(options.store, options.jobId))
  const ids = new MemoryIdRegistry()
  ids.load(await sink.loadIds())
  // What the ledger already knew counts as decided: only this run's claims are "new".
  ids.takeNew()
  const users = await sink.loadUsers(policies.legacyMetadata.key)
  const groups = await sink.loadGroups()
  // A creation time the ledger holds is kept by every later run, the dry run included (whose sink
  // starts without the ledger's groups): the group may be on the platform with it already.
  const groupCreation = new GroupCreation(sink.resumable ? groups : ((await sink.ledgerGroups?.()) ?? new Map()))
  const limits = options.memberLimits
  const memberLimits = limits ? new MemberLimits(limits, await sink.loadMemberships?.()) : undefined
  const reconciliation = await reconciliationOf(options, sink)
  const entities = Object.fromEntries(LEGACY_ENTITIES.map((e) => [e, emptySummary()])) as Record<LegacyEntity, EntityPlanSummary>
  return {
    options,
    sink,
    pageSize: options.pageSize ?? DEFAULT_PAGE_SIZE,
    mode: options.mode ?? 'full',
    retentionStart: options.now - policies.retention.retentionDays * DAY_MS,
    ids,
    known: new KnownRecords(users, groups),
    groupCreation,
    outcomes: {},
    entities,
    months: {},
    extras: new ExtrasTally(policies.legacyMetadata.key, entities.users),
    memberLimits,
    changePolicies: {
      changes: options.changes ?? DEFAULT_CHANGES,
      deletesMode: policies.deletes.mode,
      metadataKey: policies.legacyMetadata.key,
    },
    reconcileKeys: reconciliation.due,
    deltasSinceReconciliation: reconciliation.deltasSince,
    files: filesInventoryOf(options),
  }
}

/** The inventory of the run's files: under rehost (what the lane will copy) and reference (what the legacy URLs point at). */
function filesInventoryOf(options: PlanJobOptions): FilesInventory | undefined {
  const mode = options.files?.mode ?? 'reference'
  return mode === 'omit' ? undefined : new FilesInventory(options.files?.maxBytes ?? 100 * 1024 * 1024)
}
