/**
 * The pages of an entity's read, planned in order: each page mapped, then written by the sink
 * (`plan-page.ts`). A page is mapped while the page before it is still being written, when the
 * sink allows it (its `mapsWhileWriting`): mapping is the planner's CPU, writing is the ledger's,
 * and the two then overlap instead of adding up. At most one page is being written while the next
 * is mapped; pages are written one at a time, in order, each with its own cursor.
 *
 * What a page's mapping asks of earlier pages is in memory (users, groups, membership counts),
 * but for thread parents: the page being written hands its messages over ({@link mapForPlan}'s
 * `inFlight`), the sink is asked for older ones. Not in a delta: its pages classify changes of
 * loaded items against what earlier pages recorded, and count memberships the ledger holds.
 */
import type { Cursor, Page } from '../model/connector.ts'
import type { LegacyEntity } from '../model/index.ts'
import { mapForPlan, type PlannedPage, writeMapped } from './plan-page.ts'
import type { PlanRun } from './plan-types.ts'

export class PagePipeline {
  readonly #run: PlanRun
  readonly #entity: LegacyEntity
  readonly #overlaps: boolean
  /** The write of the page before, while it runs. */
  #writing: Promise<void> | undefined
  #inFlight: PlannedPage | undefined

  constructor(run: PlanRun, entity: LegacyEntity) {
    this.#run = run
    this.#entity = entity
    this.#overlaps = run.mode !== 'delta' && run.sink.mapsWhileWriting === true
  }

  /** Plans a page: returns once it is mapped and the page before it is written (without overlap: once it is written). */
  async plan(page: Page<unknown>, cursor: Cursor, watermark: number | undefined): Promise<void> {
    const run = this.#run
    const planned = await mapForPlan(run, this.#entity, page, this.#inFlight?.messages)
    if (!this.#overlaps) {
      await writeMapped(run, planned, cursor, watermark)
      return
    }
    await this.#writing
    run.options.signal?.throwIfAborted()
    this.#inFlight = planned
    this.#writing = writeMapped(run, planned, cursor, watermark)
    // Seen when awaited (the next page, or finish); meanwhile not an unhandled rejection.
    this.#writing.catch(() => {})
  }

  /** Waits for the last page's write; its failure is the read's. */
  async finish(): Promise<void> {
    const writing = this.#writing
    this.#writing = undefined
    this.#inFlight = undefined
    await writing
  }

  /** After a failure elsewhere: waits for a write still running (the store may close next), ignoring its outcome. */
  async settle(): Promise<void> {
    await this.finish().catch(() => {})
  }
}
