/**
 * The `delta:` section of a job's configuration (composed into `src/job/config.ts`): how far back
 * before an entity's watermark a delta reads again (`lookbackSeconds`), and how often a delta also
 * reconciles the source's keys with the ledger (`reconcileKeysEvery`). See docs/cutover.md "Changes
 * after the bulk load".
 *
 * Why re-read at all: a delta reads the rows whose change time is at or after the watermark, but a
 * row can become visible with a change time already below it — a long transaction that commits
 * late, a replica's lag, a clock behind. The lookback reads those again; a row read again that is
 * unchanged costs one ledger lookup and no request. What is older than the lookback (offline edits
 * synced days later, rows of a table without a change-time column) the key reconciliation finds:
 * every source key the ledger never planned is read and planned.
 */
import { z } from 'zod'

import type { LegacyEntity } from '../model/index.ts'

/** One hour: longer than a long transaction or a replica's lag usually lasts; see docs/cutover.md. */
export const DEFAULT_LOOKBACK_SECONDS = 3600
/** Every 24th delta (every 6 hours at one delta per 15 minutes), and always the final one. */
export const DEFAULT_RECONCILE_EVERY = 24

/** At most 30 days: a longer lookback re-reads more than a key reconciliation costs. */
const Seconds = z
  .number()
  .int('must be a whole number of seconds')
  .min(0)
  .max(30 * 86_400)

const Lookback = z
  .object({
    users: Seconds.default(DEFAULT_LOOKBACK_SECONDS),
    groups: Seconds.default(DEFAULT_LOOKBACK_SECONDS),
    members: Seconds.default(DEFAULT_LOOKBACK_SECONDS),
    messages: Seconds.default(DEFAULT_LOOKBACK_SECONDS),
  })
  .strict()

export const DeltaSchema = z
  .object({
    /**
     * Per entity, how many seconds before its watermark a delta starts reading (0: none). Rows
     * read again unchanged cost no request. @default 3600 each
     */
    lookbackSeconds: Lookback.prefault({}),
    /**
     * Every Nth delta also plans every source key the ledger never planned (a keys-only read of
     * each entity, anti-joined with the ledger); the final delta always does, and `run --delta
     * --reconcile-keys` does now. 0: only those two. @default 24
     */
    reconcileKeysEvery: z.number().int('must be a whole number').min(0).max(1_000_000).default(DEFAULT_RECONCILE_EVERY),
  })
  .strict()

export type DeltaConfig = z.output<typeof DeltaSchema>

/** The defaults (`delta:` absent). */
export const DEFAULT_DELTA: DeltaConfig = DeltaSchema.parse({})

/** The lookback of an entity in milliseconds. */
export function lookbackMs(delta: DeltaConfig, entity: LegacyEntity): number {
  return delta.lookbackSeconds[entity] * 1000
}

/**
 * Whether this delta reconciles the keys: when forced (`--reconcile-keys`, the final delta), or
 * when `deltasSince` earlier deltas ran since the last reconciliation and this one is the Nth.
 */
export function reconcileDue(delta: DeltaConfig, deltasSince: number, forced: boolean): boolean {
  return forced || (delta.reconcileKeysEvery > 0 && deltasSince + 1 >= delta.reconcileKeysEvery)
}
