/**
 * The read of one entity: page by page from where its cursor stands, each page mapped and handed
 * to the sink with its cursor; then the read is marked complete and, when asked, the source's own
 * count is compared with the rows read.
 */
import type { PlannedMessage, SkippedRef } from '../../mappings/index.ts'
import type { Cursor, Page, SourceRow } from '../model/connector.ts'
import { type LegacyEntity, type LegacyGroup, legacyIdOf, type LegacyMember, type LegacyMessage } from '../model/index.ts'
import { addRecorded, type VanishedItemRow } from '../state/index.ts'
import { changeClassifier } from './change-classifier.ts'
import { vanishedAllowed } from './changes-config.ts'
import { mapPage } from './map-page.ts'
import type { PlanSink } from './plan-job.ts'
import type { PlanRun } from './plan-run.ts'
import { addCounts } from './plan-summary.ts'
import { type ReadWindow, readWindow } from './read-window.ts'
import { tallyIntents } from './update-tally.ts'
import { vanishedIntents } from './vanished-intents.ts'

/** Plans one entity of the run. */
export async function planEntity(run: PlanRun, entity: LegacyEntity): Promise<void> {
  const { options, sink } = run
  const { session, signal, logger } = options
  const summary = run.entities[entity]
  const window = readWindow(entity, run.mode, sink.resumable ? await sink.getCursor(entity) : undefined)
  if (window.alreadyRead) {
    summary.alreadyRead = true
    return
  }
  const { after, since } = window
  let lastCursor: Cursor | undefined = after
  let watermark = window.watermark
  for await (const page of session.read(entity, {
    pageSize: run.pageSize,
    ...(after ? { after } : {}),
    ...(since !== undefined ? { since } : {}),
    ...(signal ? { signal } : {}),
  })) {
    signal?.throwIfAborted()
    lastCursor = page.cursor
    if (typeof page.watermark === 'number') {
      watermark = Math.max(watermark ?? 0, page.watermark)
    }
    await planPage(run, entity, page, window, watermark)
  }
  // The read is complete: later full runs skip it, delta runs start from its watermark.
  await sink.finishEntity(entity, lastCursor, watermark ?? session.snapshotAt)
  await compareKeys(run, entity)
  if (options.countSource && after === undefined) {
    summary.sourceCount = await session.count(entity, since !== undefined ? { since } : {})
    if (summary.sourceCount !== summary.sourceRows) {
      logger?.error(
        { entity, counted: summary.sourceCount, read: summary.sourceRows },
        `the source counts ${summary.sourceCount} ${entity} rows but ${summary.sourceRows} were read`,
      )
    }
  }
  logger?.info({ entity, rows: summary.sourceRows, ledger: summary.ledger }, `planned ${entity}`)
}

/**
 * The key-set comparison after a read (delta runs and the dry run; messages only with
 * `detectDeletes`): loaded items whose legacy row is gone get a `changes.vanished` intent.
 */
async function compareKeys(run: PlanRun, entity: LegacyEntity): Promise<void> {
  const { sink, options } = run
  const { session, signal, logger } = options
  const wanted = run.mode === 'delta' || !sink.resumable
  if (!wanted || !sink.vanished || !session.readKeys || (entity === 'messages' && options.detectDeletes !== true)) {
    return
  }
  const summary = run.entities[entity]
  const started = Date.now()
  const { changes } = run.changePolicies
  const keys = session.readKeys(entity, { pageSize: 10 * run.pageSize, ...(signal ? { signal } : {}) })
  if (keys === undefined) {
    return
  }
  const decide = (items: readonly VanishedItemRow[]) => {
    const intents = vanishedIntents(entity, items, changes)
    tallyIntents(summary.updates, intents)
    return intents
  }
  const outcome = await sink.vanished(entity, keys, decide, (gone, loaded) => vanishedAllowed(changes.vanished.maxShare, gone, loaded))
  summary.vanished = outcome.vanished
  summary.vanishedRefused = outcome.refused
  const { planned, superseded, reported, ignored, repeated, conflicts, dropped } = outcome
  addRecorded(summary.updatesRecorded, { planned, superseded, reported, ignored, repeated, conflicts, dropped })
  if (outcome.refused) {
    logger?.warn(
      { entity, vanished: outcome.vanished, loaded: outcome.loaded, maxShare: changes.vanished.maxShare },
      `${outcome.vanished} of ${outcome.loaded} loaded ${entity} are gone from the source: more than changes.vanished.maxShare (${changes.vanished.maxShare}), so none is recorded — check that the source is the right database and its ${entity} query still returns its rows; raise changes.vanished.maxShare if the deletion is real`,
    )
  }
  logger?.info({ entity, vanished: outcome.vanished, ms: Date.now() - started }, `compared the source's ${entity} keys with the ledger`)
}

/** Maps a page and hands it to the sink; `watermark` is the entity's, this page included. */
async function planPage(run: PlanRun, entity: LegacyEntity, page: Page<unknown>, window: ReadWindow, watermark: number | undefined): Promise<void> {
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
  // Mid-delta, the entity's watermark stays where the delta started: rows come in key order,
  // not change order, so a higher one could skip unread rows after a crash.
  const counts = await sink.writePage(entity, {
    items: mapped.items,
    skips: mapped.skips,
    rejects: mapped.rejects,
    cursor: mode === 'delta' ? { ...page.cursor, complete: 1, delta: window.since ?? 0 } : page.cursor,
    watermark: mode === 'delta' ? undefined : watermark,
    messages: run.known.thisPage,
    changes: {
      classify: changeClassifier(entity, run.changePolicies, summary.updates),
      recorded: summary.updatesRecorded,
      conflicts: run.changePolicies.changes.conflicts,
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
