/**
 * The live progress of `load`, `run` and `worker` (src/cli/progress.ts draws it): one row per
 * entity with work, from the ledger's counts, with the rate over the last minute, what that rate is
 * of the quota, and the ETA. Planning's progress comes from the pages it reads
 * ({@link createPlanProgress}).
 *
 * The counts are a scan of the job's items (0.35 s of a Postgres core at 100k items, 3.5 s at 1M),
 * so a sample is paced by src/paced-reading.ts: at least {@link MIN_SAMPLE_GAP_MS} apart, and at
 * least 20 times what the last one took (at 1M the bars move every ~70 s).
 */
import type { Logger } from 'pino'

import { buildReport, type EntityReport, type QuotaInfo } from '../load/progress.ts'
import { updateReport, updateTotals } from '../load/update-progress.ts'
import { readingGapMs } from '../paced-reading.ts'
import type { EntityPlanSummary } from '../plan/plan-summary.ts'
import type { EntityStats, LedgerStore } from '../state/store.ts'
import { createProgressView, createRateMeter, etaText, type ProgressRow } from './progress.ts'

/** The rows of the loading progress: entities with work. */
export function loadingRows(report: readonly EntityReport[], ratePerMinute: ReadonlyMap<string, number>): ProgressRow[] {
  return report
    .filter((r) => r.total > 0)
    .map((r) => {
      const perMinute = ratePerMinute.get(r.entity) ?? 0
      return {
        entity: r.entity,
        value: r.done + r.skipped + r.rejected,
        total: r.total,
        perMinute,
        ofQuota: r.quotaItemsPerMinute > 0 ? perMinute / r.quotaItemsPerMinute : undefined,
        eta: etaText(r.remaining, perMinute, r.quotaItemsPerMinute),
        note: `rejected ${r.rejected.toLocaleString('en-US')}`,
      }
    })
}

/**
 * Items per minute of each entity as `status` counts them (items settled done in the last minute,
 * from the ledger), so the bars and `status` show one rate figure, not two that disagree.
 */
export function ledgerRates(stats: readonly EntityStats[]): Map<string, number> {
  return new Map(stats.map((s) => [s.entity, s.itemsLastMinute]))
}

/** The live progress's own cadence: a sample at most every 2 s. */
export const MIN_SAMPLE_GAP_MS = 2000

export interface ProgressDrawer {
  /** Redraws (best effort, paced by {@link readingGapMs}); call it as often as you like. */
  draw(): Promise<void>
  /** Draws the last counts and gives the terminal back: `final`, the job's counts read as the loader finished, else a reading of its own. */
  stop(final?: readonly EntityStats[]): Promise<void>
}

/** The job's loading progress on stderr: bars on a terminal, plain lines otherwise. */
export function createProgressDrawer(store: LedgerStore, jobId: string, quota: QuotaInfo, logger?: Logger): ProgressDrawer {
  const view = createProgressView({ phase: 'loading', unit: 'items', ...(logger ? { logger } : {}) })
  const rates = createRateMeter()
  let lastDraw = 0
  let lastCostMs = 0
  let drawing: Promise<void> | undefined
  /** One reading drawn; `given`: the job's counts read already (then only the update lane's are read). */
  const sample = async (given?: readonly EntityStats[]) => {
    const started = Date.now()
    try {
      const stats = given ?? (await store.entityStats(jobId))
      // The update lane's row: updates of loaded items settled (done or rejected) of those to apply.
      const u = updateTotals(updateReport(await store.updatePlan.counts(jobId)))
      const applied = u.done + u.rejected
      const perMinute = rates(new Map([['updates', applied]]))
      const updates =
        applied + u.remaining === 0
          ? []
          : [
              {
                entity: 'updates',
                value: applied,
                total: applied + u.remaining,
                perMinute: perMinute.get('updates') ?? 0,
                ofQuota: undefined,
                eta: u.remaining === 0 ? 'done' : '',
                note: `rejected ${u.rejected.toLocaleString('en-US')}`,
              },
            ]
      view.update([...loadingRows(buildReport(stats, quota), ledgerRates(stats)), ...updates])
    } catch {
      // progress is best effort
    } finally {
      lastCostMs = Date.now() - started
    }
  }
  return {
    async draw() {
      if (drawing || Date.now() - lastDraw < readingGapMs(lastCostMs, MIN_SAMPLE_GAP_MS)) {
        return
      }
      lastDraw = Date.now()
      drawing = sample().finally(() => (drawing = undefined))
      await drawing
    },
    async stop(final) {
      // The last counts (those the loader read as it finished, when given), unless the ledger is
      // slow to answer (it may be why the loader stopped).
      const last = (async () => {
        await drawing
        await sample(final)
      })()
      let timer: NodeJS.Timeout | undefined
      await Promise.race([last, new Promise((resolve) => (timer = setTimeout(resolve, 2000)))])
      clearTimeout(timer)
      view.stop()
    },
  }
}

/** What loading the items planned so far takes at the quota: `1,200 items: load ≈ 2m at quota`. */
function loadAtQuota(items: number, perMinuteQuota: number): string {
  if (items === 0) {
    return 'no items yet'
  }
  return `${items.toLocaleString('en-US')} items: load ${etaText(items, 0, perMinuteQuota).replace('ETA@quota ', '≈ ')} at quota`
}

/**
 * Planning's progress, from the summary planJob reports after every page: source rows read per
 * entity (of the source's count once known), the rate, and what loading the items planned so far
 * would take at the quota.
 */
export function createPlanProgress(quota: QuotaInfo, logger?: Logger): { onPage(entity: string, s: EntityPlanSummary): void; stop(): void } {
  const view = createProgressView({ phase: 'planning', unit: 'rows', ...(logger ? { logger } : {}) })
  const rates = createRateMeter()
  const rows = new Map<string, { value: number; total: number | undefined; items: number }>()
  const perMinuteQuota = quota.requestsPerMinute * quota.itemsPerRequest
  let lastDraw = 0
  const render = () => {
    const perMinute = rates(new Map([...rows].map(([e, r]) => [e, r.value])))
    view.update(
      [...rows].map(([entity, r]) => ({
        entity,
        value: r.value,
        total: r.total,
        perMinute: perMinute.get(entity) ?? 0,
        ofQuota: undefined,
        eta: loadAtQuota(r.items, perMinuteQuota),
      })),
    )
  }
  return {
    onPage(entity, s) {
      rows.set(entity, { value: s.sourceRows, total: s.sourceCount ?? undefined, items: s.items })
      if (Date.now() - lastDraw >= 500) {
        lastDraw = Date.now()
        render()
      }
    },
    stop() {
      if (rows.size > 0) {
        render()
      }
      view.stop()
    },
  }
}
