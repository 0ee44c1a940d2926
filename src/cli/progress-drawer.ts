/**
 * The live progress of `load`, `run` and `worker` on a terminal: one line per entity with work,
 * redrawn in place (at most every 2 s) from the ledger's counts, with the rate over the last
 * minute and the ETA.
 */
import { formatDuration } from '../format-duration.ts'
import { buildReport, type EntityReport, type QuotaInfo } from '../load/progress.ts'
import type { LedgerStore } from '../state/store.ts'

const n = (v: number) => v.toLocaleString('en-US')

/** One progress line per entity that has work, for a terminal. */
export function formatProgressLines(report: readonly EntityReport[], ratePerMinute: Map<string, number>): string[] {
  return report
    .filter((r) => r.total > 0)
    .map((r) => {
      const finished = r.done + r.skipped + r.rejected
      const pct = r.total > 0 ? ((finished / r.total) * 100).toFixed(1) : '100.0'
      const rate = ratePerMinute.get(r.entity) ?? 0
      const eta =
        r.remaining === 0
          ? 'done'
          : rate > 0
            ? `ETA ${formatDuration((r.remaining / rate) * 60)}`
            : `ETA@quota ${formatDuration(r.etaSecondsAtQuota)}`
      return `${r.entity.padEnd(8)} ${n(finished).padStart(11)}/${n(r.total).padEnd(11)} ${pct.padStart(5)}%  ${n(Math.round(rate)).padStart(7)} items/min (${((rate / r.quotaItemsPerMinute) * 100).toFixed(0)}% of quota)  rejected ${n(r.rejected)}  ${eta}`
    })
}

/** A redraw function for the job's progress on stderr; call it as often as you like (best effort). */
export function createProgressDrawer(store: LedgerStore, jobId: string, quota: QuotaInfo): () => Promise<void> {
  let drawn = 0
  let lastDraw = 0
  let drawing = false
  const samples: { at: number; done: Map<string, number> }[] = []
  return async () => {
    if (drawing || Date.now() - lastDraw < 2000) {
      return
    }
    drawing = true
    lastDraw = Date.now()
    try {
      const stats = await store.entityStats(jobId)
      const now = Date.now()
      samples.push({ at: now, done: new Map(stats.map((s) => [s.entity, s.done + s.rejected + s.skipped])) })
      while (samples.length > 2 && now - (samples[0]?.at ?? now) > 60_000) {
        samples.shift()
      }
      const first = samples[0]
      const rates = new Map<string, number>()
      if (first && now > first.at) {
        for (const s of stats) {
          rates.set(s.entity, ((s.done + s.rejected + s.skipped - (first.done.get(s.entity) ?? 0)) / (now - first.at)) * 60_000)
        }
      }
      const lines = formatProgressLines(buildReport(stats, quota), rates)
      let out = drawn > 0 ? `\x1b[${drawn}A` : ''
      for (const l of lines) {
        out += `\r\x1b[2K${l}\n`
      }
      process.stderr.write(out)
      drawn = lines.length
    } catch {
      // progress is best effort
    } finally {
      drawing = false
    }
  }
}
