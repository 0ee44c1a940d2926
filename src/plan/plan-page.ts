/**
 * One page of a read, planned: its rows mapped (`map-page.ts`) and handed to the sink with the
 * cursor to save beside them, in one transaction. Shared by an entity's read (`plan-entity.ts`) and
 * the key reconciliation's read of the rows the ledger never planned (`key-reconciliation.ts`).
 */
import type { PlannedMessage, SkippedRef } from '../../mappings/index.ts'
import type { Cursor, Page, SourceRow } from '../model/connector.ts'
import { type LegacyEntity, type LegacyGroup, legacyIdOf, type LegacyMember, type LegacyMessage } from '../model/index.ts'
import { changeClassifier } from './change-classifier.ts'
import { mapPage } from './map-page.ts'
import { orphanedParts } from './orphaned-parts.ts'
import { addCounts } from './plan-summary.ts'
import type { PlanRun, PlanSink } from './plan-types.ts'

/**
 * Maps a page and hands it to the sink with `cursor` (saved with the page) and `watermark` (the
 * entity's, this page included; undefined keeps the saved one).
 */
export async function planPage(
  run: PlanRun,
  entity: LegacyEntity,
  page: Page<unknown>,
  cursor: Cursor,
  watermark: number | undefined,
): Promise<void> {
  const { sink, mode } = run
  const summary = run.entities[entity]
  summary.sourceRows += page.rows.length
  run.known.startPage(entity === 'messages' ? await parentsOf(page.rows, sink, run.known.nameOfUid) : new Map())
  if (
    entity === 'groups' &&
    (await run.groupCreation.prepare(run.options.session, page.rows as readonly SourceRow<LegacyGroup>[], run.options.signal))
  ) {
    run.options.logger?.info(
      { groups: run.groupCreation.groupsWithActivity },
      'read the earliest member join and group message of each group, for groups without a creation time',
    )
  }
  if (entity === 'members' && mode === 'delta' && run.memberLimits && sink.countedMembers) {
    // Changed memberships come again: those the ledger counted already must not count twice.
    const ids = page.rows.flatMap((r) => (r.ok ? [legacyIdOf('members', (r as unknown as { record: LegacyMember }).record)] : []))
    run.memberLimits.counted = await sink.countedMembers(ids)
  }
  const mapped = mapPage(run, entity, page.rows as Parameters<typeof mapPage>[2], summary)
  // Id decisions are saved before the page: the cursor must never run ahead of them.
  await sink.saveIds(run.ids)
  if (mapped.extras.length > 0) {
    addCounts(run.entities.users.ledger, await sink.writeExtras(mapped.extras))
  }
  const orphans = orphanedParts(entity, run.options.policies.longText.maxParts)
  const counts = await sink.writePage(entity, {
    items: mapped.items,
    skips: mapped.skips,
    rejects: mapped.rejects,
    cursor,
    watermark,
    messages: run.known.thisPage,
    changes: {
      classify: changeClassifier(entity, run.changePolicies, summary.updates),
      recorded: summary.updatesRecorded,
      conflicts: run.changePolicies.changes.conflicts,
      ...(orphans !== undefined ? { orphans } : {}),
    },
  })
  addCounts(summary.ledger, counts)
  run.options.onPage?.(entity, summary)
}

/** Thread parents of a page that were planned on earlier pages: one lookup. */
async function parentsOf(
  rows: readonly { ok: boolean }[],
  sink: PlanSink,
  nameOfUid: (uid: string) => string | undefined,
): Promise<Map<string, PlannedMessage | SkippedRef>> {
  const parentIds = new Set<string>()
  for (const r of rows) {
    const parent = r.ok ? (r as unknown as { record: LegacyMessage }).record.threadParentId : undefined
    if (parent !== undefined && parent !== null && parent !== '') {
      parentIds.add(parent)
    }
  }
  if (parentIds.size === 0) {
    return new Map()
  }
  return sink.parents([...parentIds], nameOfUid)
}
