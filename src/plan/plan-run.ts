/**
 * Starts one planning run: its state (a {@link PlanRun}, shared by its entities and pages: id
 * decisions, lookups, tallies), with the id decisions and the users and groups the sink already knows.
 */
import { MemoryIdRegistry } from '../../mappings/index.ts'
import { LEGACY_ENTITIES, type LegacyEntity } from '../model/index.ts'
import { DEFAULT_CHANGES } from './changes-config.ts'
import { ExtrasTally } from './extras-tally.ts'
import { FilesInventory } from './files-inventory.ts'
import { GroupCreation } from './group-creation.ts'
import { reconciliationOf } from './key-reconciliation.ts'
import { KnownRecords } from './known-records.ts'
import { createLedgerSink } from './ledger-sink.ts'
import { MemberLimits } from './member-limits.ts'
import { emptySummary, type EntityPlanSummary } from './plan-summary.ts'
import type { PlanJobOptions, PlanRun } from './plan-types.ts'

/** Rows per source page. @default 1000 */
export const DEFAULT_PAGE_SIZE = 1000
const DAY_MS = 86_400_000

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
