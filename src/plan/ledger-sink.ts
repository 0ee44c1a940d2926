/**
 * The {@link PlanSink} of real planning (`chatferry run`): every page, its skips, rejects and
 * cursor go into the ledger in one transaction; id decisions are saved before their page; lookups
 * are rebuilt from the ledger when a run resumes.
 */
import type { MemoryIdRegistry } from '../../mappings/index.ts'
import type { LedgerStore } from '../state/index.ts'
import { loadGroups, loadIdMap, loadMessages, loadUsers } from './lookups.ts'
import type { MembershipCounts } from './member-limits.ts'
import type { PlanSink } from './plan-types.ts'

export function createLedgerSink(store: LedgerStore, jobId: string): PlanSink {
  return {
    resumable: true,
    // The embedded ledger runs every statement in the transaction open on its one connection.
    mapsWhileWriting: !store.embedded,
    loadIds: () => loadIdMap(store, jobId),
    saveIds: (ids) => saveIdMap(store, jobId, ids),
    loadUsers: (metadataKey) => loadUsers(store, jobId, metadataKey),
    loadGroups: () => loadGroups(store, jobId),
    ledgerGroups: () => loadGroups(store, jobId),
    parents: (legacyIds, nameOfUid) => loadMessages(store, jobId, legacyIds, nameOfUid),
    async loadMemberships() {
      const counts: MembershipCounts = { byGroup: new Map(), byUser: new Map() }
      for (const r of await store.planLookups.memberships(jobId)) {
        ;(r.kind === 'group' ? counts.byGroup : counts.byUser).set(r.id, r.n)
      }
      return counts
    },
    countedMembers: async (legacyIds) => new Set(await store.planLookups.countedMembers(jobId, legacyIds)),
    getCursor: (entity) => store.getCursor(jobId, entity),
    writeExtras: (items) => store.planItems(jobId, 'users', items),
    writePage: (entity, page) =>
      store.planPage(jobId, entity, {
        items: page.items,
        skips: page.skips,
        rejects: page.rejects,
        cursor: { value: page.cursor, ...(page.watermark !== undefined ? { watermark: page.watermark } : {}) },
        changes: page.changes,
      }),
    vanished: (entity, sourceKeys, decide, allow) => store.updatePlan.recordVanished(jobId, entity, sourceKeys, decide, allow),
    compareKeys: (entity, sourceKeys, want) => store.updatePlan.compareKeys(jobId, entity, sourceKeys, want),
    deltasSinceReconciliation: () => store.updatePlan.deltasSinceReconciliation(jobId),
    recordDeltasSinceReconciliation: (deltas) => store.updatePlan.recordDeltasSinceReconciliation(jobId, deltas),
    finishEntity: (entity, cursor, watermark) => store.saveCursor(jobId, entity, { ...(cursor ?? {}), complete: 1 }, watermark),
  }
}

/** Saves this run's new id decisions; fails when another planner changed the job's id map meanwhile. */
async function saveIdMap(store: LedgerStore, jobId: string, ids: MemoryIdRegistry): Promise<void> {
  const fresh = ids.takeNew()
  for (const kind of ['user', 'group'] as const) {
    const mine = fresh.filter((e) => e.kind === kind)
    if (mine.length === 0) {
      continue
    }
    const conflicts = await store.saveIdMappings(jobId, kind, mine)
    if (conflicts.length > 0) {
      const c = conflicts[0]
      throw new Error(
        `the id map of job ${jobId} changed under this run (${kind} ${c?.legacyId} → ${c?.platformId}); is another planner running on the same job?`,
      )
    }
  }
}
