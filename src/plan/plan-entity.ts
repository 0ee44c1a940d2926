/**
 * The read of one entity: page by page from where its cursor stands (a delta: from its watermark
 * less its lookback), each page mapped and handed to the sink with its cursor (`page-pipeline.ts`,
 * `plan-page.ts`);
 * then the read is marked complete and, when asked, the source's own count is compared with the
 * rows read; then the source's keys are compared with the ledger's (vanished rows, and the key
 * reconciliation when due: `key-reconciliation.ts`).
 */
import type { Cursor } from '../model/connector.ts'
import type { LegacyEntity } from '../model/index.ts'
import { addRecorded, type VanishedItemRow, type VanishedOutcome } from '../state/index.ts'
import { vanishedAllowed } from './changes-config.ts'
import { DEFAULT_DELTA, lookbackMs } from './delta-config.ts'
import { planUnplanned } from './key-reconciliation.ts'
import { PagePipeline } from './page-pipeline.ts'
import type { PlanRun } from './plan-types.ts'
import { readAhead } from './read-ahead.ts'
import { readWindow } from './read-window.ts'
import { tallyIntents } from './update-tally.ts'
import { vanishedIntents } from './vanished-intents.ts'

/** Plans one entity of the run. */
export async function planEntity(run: PlanRun, entity: LegacyEntity): Promise<void> {
  const { options, sink } = run
  const { session, signal, logger } = options
  const summary = run.entities[entity]
  const lookback = lookbackMs(options.delta ?? DEFAULT_DELTA, entity)
  const window = readWindow(entity, run.mode, sink.resumable ? await sink.getCursor(entity) : undefined, lookback)
  if (window.alreadyRead) {
    summary.alreadyRead = true
    return
  }
  const { after, since } = window
  let lastCursor: Cursor | undefined = after
  let watermark = window.watermark
  const pages = session.read(entity, {
    pageSize: run.pageSize,
    ...(after ? { after } : {}),
    ...(since !== undefined ? { since } : {}),
    ...(signal ? { signal } : {}),
  })
  const pipeline = new PagePipeline(run, entity)
  try {
    for await (const page of readAhead(pages)) {
      signal?.throwIfAborted()
      lastCursor = page.cursor
      if (typeof page.watermark === 'number') {
        // Never past the snapshot: a change time ahead of the source's clock (a client's clock
        // ahead) would make later deltas skip rows changed before it.
        watermark = Math.max(watermark ?? 0, Math.min(page.watermark, session.snapshotAt))
      }
      // Mid-delta, the entity's watermark stays where the delta started: rows come in key order,
      // not change order, so a higher one could skip unread rows after a crash.
      const cursor = run.mode === 'delta' ? { ...page.cursor, complete: 1, delta: window.since ?? 0 } : page.cursor
      await pipeline.plan(page, cursor, run.mode === 'delta' ? undefined : watermark)
    }
    await pipeline.finish()
  } finally {
    await pipeline.settle()
  }
  // The read is complete: later full runs skip it, delta runs start from its watermark (less the
  // lookback). Without any change time read, the snapshot's time: rows that appear later with an
  // older time (or in a table without a change-time column) are the key reconciliation's.
  await sink.finishEntity(entity, lastCursor, watermark ?? session.snapshotAt)
  if (options.countSource && after === undefined) {
    summary.sourceCount = await session.count(entity, since !== undefined ? { since } : {})
    if (summary.sourceCount !== summary.sourceRows) {
      logger?.error(
        { entity, counted: summary.sourceCount, read: summary.sourceRows },
        `the source counts ${summary.sourceCount} ${entity} rows but ${summary.sourceRows} were read`,
      )
    }
  }
  await compareKeys(run, entity, { ...(lastCursor ?? {}), complete: 1 })
  logger?.info({ entity, rows: summary.sourceRows, ledger: summary.ledger }, `planned ${entity}`)
}

/**
 * The key-set comparisons after a read, on one keys-only read of the source: vanished items (delta
 * runs and the dry run; messages only with `detectDeletes`) get a `changes.vanished` intent, and
 * when this delta reconciles the keys, the source's keys the ledger never planned are planned
 * (`key-reconciliation.ts`), each page saved with `finished`, the entity's completed cursor.
 */
async function compareKeys(run: PlanRun, entity: LegacyEntity, finished: Cursor): Promise<void> {
  const { sink, options } = run
  const { session, signal, logger } = options
  const wanted = run.mode === 'delta' || !sink.resumable
  const vanished = wanted && sink.vanished !== undefined && (entity !== 'messages' || options.detectDeletes === true)
  const reconcile = run.reconcileKeys && sink.compareKeys !== undefined
  if ((!vanished && !reconcile) || !session.readKeys) {
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
  const allow = (gone: number, loaded: number) => vanishedAllowed(changes.vanished.maxShare, gone, loaded)
  if (!reconcile) {
    noteVanished(run, entity, await (sink.vanished as NonNullable<typeof sink.vanished>)(entity, keys, decide, allow))
  } else {
    const found = await (sink.compareKeys as NonNullable<typeof sink.compareKeys>)(entity, keys, {
      ...(vanished ? { vanished: { decide, allow } } : {}),
      unplanned: true,
    })
    if (found.vanished) {
      noteVanished(run, entity, found.vanished)
    }
    summary.unplanned = found.unplanned.length > 0 ? await planUnplanned(run, entity, found.unplanned, finished) : 0
    if (summary.unplanned < found.unplanned.length) {
      // A key the keys-only read yields but the entity's read does not (its query filters more):
      // nothing to plan; it is found again by the next reconciliation.
      logger?.warn(
        { entity, keys: found.unplanned.length, read: summary.unplanned, sample: found.unplanned.slice(0, 5) },
        `the source's ${entity} keys hold ${found.unplanned.length} the ledger never planned, but its read returned only ${summary.unplanned} of them`,
      )
    }
  }
  logger?.info(
    { entity, vanished: summary.vanished, unplanned: summary.unplanned, ms: Date.now() - started },
    `compared the source's ${entity} keys with the ledger`,
  )
}

/** A vanished-item comparison's outcome, into the entity's summary (and a warning when refused). */
function noteVanished(run: PlanRun, entity: LegacyEntity, outcome: VanishedOutcome): void {
  const summary = run.entities[entity]
  const { changes } = run.changePolicies
  summary.vanished = outcome.vanished
  summary.vanishedRefused = outcome.refused
  const { planned, superseded, reported, ignored, repeated, conflicts, dropped } = outcome
  addRecorded(summary.updatesRecorded, { planned, superseded, reported, ignored, repeated, conflicts, dropped })
  if (outcome.refused) {
    run.options.logger?.warn(
      { entity, vanished: outcome.vanished, loaded: outcome.loaded, maxShare: changes.vanished.maxShare },
      `${outcome.vanished} of ${outcome.loaded} loaded ${entity} are gone from the source: more than changes.vanished.maxShare (${changes.vanished.maxShare}), so none is recorded — check that the source is the right database and its ${entity} query still returns its rows; raise changes.vanished.maxShare if the deletion is real`,
    )
  }
}
