/**
 * The {@link PlanSink} of the dry run: writes no item state, no id decision and no cursor. Mapped
 * items are classified against the ledger ({@link classifyItems}); the page's messages are kept
 * as thread parents in the session's temporary table, where later pages look them up. The update
 * intents of the page's changed loaded items are asked, read-only, which the conflict policy would
 * act on ({@link previewPageConflicts}), as a delta asks where it records them. Whether the ledger
 * holds items of the entity at all is asked once for many pages (`ledger-holds.ts`).
 */
import type { PlannedMessage, SkippedRef } from '../../mappings/index.ts'
import { type DryRunSession, noUpdates, type PlanParentRow } from '../state/index.ts'
import { type ClassifyInto, classifyItems, classifySkips } from './classify-items.ts'
import { collectingClassifier, previewPageConflicts } from './conflict-preview.ts'
import { withCachedHasItems } from './ledger-holds.ts'
import { groupsOf, idMapEntries, policyOfSkipReason } from './lookups.ts'
import { previewOrphanedParts } from './orphaned-parts.ts'
import type { PlanSink } from './plan-types.ts'

/**
 * `parentText`: whether a thread parent's text and sender name are kept for later pages (only
 * `threads.quoteParent` reads them; without it, the parents table holds no message text).
 */
export function createDryRunSink(given: ClassifyInto, parentText = true): PlanSink {
  const into: ClassifyInto = { ...given, session: withCachedHasItems(given.session) }
  const { session, jobId } = into
  return {
    resumable: false,
    // The session's one connection runs its statements in turn, and the dry run opens no transaction.
    mapsWhileWriting: true,
    loadIds: async () => idMapEntries(await session.idMap(jobId)),
    // Decisions stay in memory: the dry run must not claim ids for a later real run.
    saveIds: async (ids) => void ids.takeNew(),
    loadUsers: async () => new Map(),
    loadGroups: async () => new Map(),
    // Through the session's own connection (the embedded ledger has only one).
    ledgerGroups: async () => groupsOf(await session.lookupItems(jobId, 'groups')),
    async parents(legacyIds) {
      const found = new Map<string, PlannedMessage | SkippedRef>()
      for (const r of await session.parents(legacyIds)) {
        found.set(r.legacyId, parentOf(r))
      }
      return found
    },
    getCursor: async () => undefined,
    writeExtras: (items) => classifyItems(into, 'users', items),
    async writePage(entity, page) {
      if (entity === 'messages' && page.messages.size > 0) {
        await session.keepParents([...page.messages].map(([id, m]) => parentRow(id, m, parentText)))
      }
      const changes = collectingClassifier(page.changes.classify)
      const counts = await classifyItems(into, entity, page.items, changes.classify)
      await classifySkips(into, entity, page.skips, changes.classify)
      const changedIds = new Set(changes.found.map((f) => f.legacyId))
      await previewOrphanedParts(into, entity, page.items, changedIds, page.changes.orphans, changes.classify)
      await previewPageConflicts(into, entity, changes.found, page.changes.conflicts ?? 'report')
      counts.skipped = page.skips.length
      counts.rejected = page.rejects.length
      return counts
    },
    finishEntity: async () => {},
    vanished: vanishedOf(session, jobId),
  }
}

function parentRow(legacyId: string, m: PlannedMessage | SkippedRef, withText: boolean): PlanParentRow {
  if ('skipped' in m) {
    return { legacyId, muid: null, text: null, senderName: null, skippedPolicy: m.policy }
  }
  if (!withText) {
    return { legacyId, muid: m.muid, text: null, senderName: null, skippedPolicy: null }
  }
  return { legacyId, muid: m.muid, text: m.text ?? null, senderName: m.senderName ?? null, skippedPolicy: null }
}

function parentOf(r: PlanParentRow): PlannedMessage | SkippedRef {
  if (r.skippedPolicy !== null) {
    return { skipped: true, policy: policyOfSkipReason(`policy:${r.skippedPolicy}:`) }
  }
  return {
    muid: r.muid ?? '',
    ...(r.text !== null ? { text: r.text } : {}),
    ...(r.senderName !== null ? { senderName: r.senderName } : {}),
  }
}

/** The dry run's comparison: counted (the decider tallies the intents), never recorded. */
function vanishedOf(session: DryRunSession, jobId: string): NonNullable<PlanSink['vanished']> {
  return async (entity, sourceKeys, decide, allow) => {
    const scan = await session.vanished(jobId, entity, sourceKeys, (items) => void decide(items), allow)
    return { ...noUpdates(), ...scan }
  }
}
