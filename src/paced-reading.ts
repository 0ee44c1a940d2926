/**
 * Readings an observer takes of the ledger while a migration runs (the live progress, the
 * dashboard, a Prometheus scrape) without costing the migration more than its share: the job's
 * counts are a scan of its items, about 0.35 s of a Postgres core at 100k items and 3.5 s at 1M, so
 * a fixed cadence (every 2 s; a scrape every 5–15 s) would take a whole core from the loader on a
 * large job, or outlast a scrape's timeout. The next reading waits at least
 * {@link READING_COST_FACTOR} times what the last one took, so observing costs the ledger at most
 * 1 part in 20 of one core however large the job; in between, the last reading answers. Pure
 * timing: what is read is the caller's.
 */

/** The ledger time an observer may take: 1 part in this many. */
export const READING_COST_FACTOR = 20

/** How long after the start of a reading that took `lastCostMs` the next may start: at least `minGapMs`. */
export function readingGapMs(lastCostMs: number, minGapMs: number): number {
  return Math.max(minGapMs, lastCostMs * READING_COST_FACTOR)
}

export interface PacedReading<T> {
  /**
   * The last reading while it is younger than {@link gapMs} (from its start), else a new one;
   * callers at the same moment share one. A failed reading is not kept: its callers get the
   * failure and the next call reads again (the callers' own cadence paces the retries).
   */
  get(): Promise<T>
  /** The current gap between two readings' starts, in ms. */
  gapMs(): number
}

export interface PacedReadingOptions<T> {
  /** The shortest gap between two readings' starts (the observer's own cadence). */
  readonly minGapMs: number
  /** The clock, in ms. @default Date.now */
  readonly now?: () => number
  /**
   * The ledger time a reading cost, from its value and the time it took (a reading that had to open
   * the store first may say less than it took). @default the time it took
   */
  readonly costOf?: (value: T, elapsedMs: number) => number
}

/** Wraps `read` so that it runs at most every {@link readingGapMs}; see {@link PacedReading}. */
export function pacedReading<T>(read: () => Promise<T>, options: PacedReadingOptions<T>): PacedReading<T> {
  const now = options.now ?? Date.now
  let last: { readonly value: T; readonly startedAt: number } | undefined
  let costMs = 0
  let inFlight: Promise<T> | undefined
  const gapMs = () => readingGapMs(costMs, options.minGapMs)
  const start = async (): Promise<T> => {
    const startedAt = now()
    let value: T
    try {
      value = await read()
    } catch (err) {
      last = undefined
      costMs = now() - startedAt
      throw err
    }
    const elapsed = now() - startedAt
    costMs = options.costOf === undefined ? elapsed : options.costOf(value, elapsed)
    last = { value, startedAt }
    return value
  }
  return {
    get() {
      if (inFlight !== undefined) {
        return inFlight
      }
      if (last !== undefined && now() - last.startedAt < gapMs()) {
        return Promise.resolve(last.value)
      }
      inFlight = start().finally(() => (inFlight = undefined))
      return inFlight
    },
    gapMs,
  }
}
