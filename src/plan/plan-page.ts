/**
 * One page of a read, planned: its rows mapped (`map-page.ts`, {@link mapForPlan}) and handed to
 * the sink with the cursor to save beside them, in one transaction ({@link writeMapped}). Shared by
 * an entity's read (`page-pipeline.ts`, which may map a page while the one before is written) and
 * the key reconciliation's read of the rows the ledger never planned (`key-reconciliation.ts`).
 */
import type { PlannedMessage, SkippedRef } from '../../mappings/index.ts'
import type { Cursor, Page, SourceRow } from '../model/connector.ts'
import { type LegacyEntity, type LegacyGroup, legacyIdOf, type LegacyMember, type LegacyMessage } from '../model/index.ts'
import { changeClassifier } from './change-classifier.ts'
import { mapPage, type MappedPage } from './map-page.ts'
import { orphanedParts } from './orphaned-parts.ts'
import { addCounts } from './plan-summary.ts'
import type { PlanRun, PlanSink } from './plan-types.ts'

/** A page mapped for the sink, waiting to be written ({@link writeMapped}). */
export interface PlannedPage {
  readonly entity: LegacyEntity
  readonly mapped: MappedPage
  /** The page's messages, by legacy id, as replies on later pages look them up (thread parents). */
  readonly messages: ReadonlyMap<string, PlannedMessage | SkippedRef>
}

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
  await writeMapped(run, await mapForPlan(run, entity, page), cursor, watermark)
}

/**
 * Maps a page. `inFlight`: the messages of the page before, while the sink still writes it
 * (`page-pipeline.ts`): replies find those parents here, the sink is asked only for the others.
 */
export async function mapForPlan(
  run: PlanRun,
  entity: LegacyEntity,
  page: Page<unknown>,
  inFlight?: ReadonlyMap<string, PlannedMessage | SkippedRef>,
): Promise<PlannedPage> {
  const { sink, mode } = run
  const summary = run.entities[entity]
  summary.sourceRows += page.rows.length
  run.known.startPage(entity === 'messages' ? await parentsOf(page.rows, sink, run.known.nameOfUid, inFlight) : new Map())
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
  // startPage gave this page a map of its own: the next page's start leaves this one as it is.
  return { entity, mapped, messages: run.known.thisPage }
}

/**
 * Hands a mapped page to the sink, with its cursor and watermark. The run's new id decisions are
 * taken from the registry as this is called (before its first await): the pipeline maps the next
 * page only after that, so its decisions are saved with the next page, never before their page.
 */
export async function writeMapped(run: PlanRun, planned: PlannedPage, cursor: Cursor, watermark: number | undefined): Promise<void> {
  const { sink } = run
  const { entity, mapped, messages } = planned
  const summary = run.entities[entity]
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
    messages,
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

/**
 * Thread parents of a page that were planned on earlier pages: those of the page still being
 * written from `inFlight`, the others in one lookup. Always a new map (the page adds its own).
 */
async function parentsOf(
  rows: readonly { ok: boolean }[],
  sink: PlanSink,
  nameOfUid: (uid: string) => string | undefined,
  inFlight: ReadonlyMap<string, PlannedMessage | SkippedRef> | undefined,
): Promise<Map<string, PlannedMessage | SkippedRef>> {
  const found = new Map<string, PlannedMessage | SkippedRef>()
  const parentIds = new Set<string>()
  for (const r of rows) {
    const parent = r.ok ? (r as unknown as { record: LegacyMessage }).record.threadParentId : undefined
    if (parent === undefined || parent === null || parent === '') {
      continue
    }
    const held = inFlight?.get(parent)
    if (held !== undefined) {
      found.set(parent, held)
    } else {
      parentIds.add(parent)
    }
  }
  if (parentIds.size === 0) {
    return found
  }
  const asked = await sink.parents([...parentIds], nameOfUid)
  if (found.size === 0) {
    return asked
  }
  for (const [id, parent] of asked) {
    found.set(id, parent)
  }
  return found
}
