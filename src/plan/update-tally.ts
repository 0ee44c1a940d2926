/**
 * The update intents planning found per entity, by kind and policy, with samples (legacy id,
 * target key, reason): what the plan report and the run summary show. Counted as found, before the
 * ledger decides (a reported change seen again is counted again here, recorded once there). The
 * dry run's conflict preview (`conflict-preview.ts`) counts into the same shape by what
 * `changes.conflicts` does ({@link ConflictTally}).
 */
import type { ConflictOutcome, UpdateKind, UpdatePolicy } from '../state/index.ts'

/** Samples kept per kind and policy. */
export const UPDATE_SAMPLES = 5

export interface UpdateSample {
  readonly legacyId: string
  readonly targetKey: string
  readonly reason: string
}

export interface UpdateTallyEntry {
  count: number
  samples: UpdateSample[]
}

/** `kind → policy → count + samples`. */
export type UpdateTally = Partial<Record<UpdateKind, Partial<Record<UpdatePolicy, UpdateTallyEntry>>>>

/** `kind → outcome → count + samples` (reasons as a delta would record them). */
export type ConflictTally = Partial<Record<UpdateKind, Partial<Record<ConflictOutcome, UpdateTallyEntry>>>>

/** Counts intents into `tally`. */
export function tallyIntents(
  tally: UpdateTally,
  intents: readonly { kind: UpdateKind; policy: UpdatePolicy; legacyId: string; targetKey: string; reason: string }[],
): void {
  for (const i of intents) {
    tallyOne(tally, i.kind, i.policy, i)
  }
}

/** Counts one intent under `kind → column` (a policy, or what the conflict policy does with it), keeping a sample. */
export function tallyOne<C extends string>(
  tally: Partial<Record<UpdateKind, Partial<Record<C, UpdateTallyEntry>>>>,
  kind: UpdateKind,
  column: C,
  sample: UpdateSample,
): void {
  const byColumn: Partial<Record<C, UpdateTallyEntry>> = (tally[kind] ??= {})
  const entry = (byColumn[column] ??= { count: 0, samples: [] })
  entry.count++
  if (entry.samples.length < UPDATE_SAMPLES) {
    entry.samples.push({ legacyId: sample.legacyId, targetKey: sample.targetKey, reason: sample.reason })
  }
}

/** Total intents of a tally, optionally of one policy. */
export function tallyTotal(tally: UpdateTally, policy?: UpdatePolicy): number {
  let n = 0
  for (const byPolicy of Object.values(tally)) {
    for (const [p, e] of Object.entries(byPolicy ?? {})) {
      if (policy === undefined || p === policy) {
        n += e?.count ?? 0
      }
    }
  }
  return n
}
