/** What planning counted per entity ({@link EntityPlanSummary}), and the helpers that count it. */
import { emptyCounts, noUpdates, type PlanCounts, type RecordedUpdates } from '../state/index.ts'
import type { UpdateTally } from './update-tally.ts'

/** Sample legacy ids kept per reject reason in a summary. */
export const SAMPLES_PER_REASON = 5

export interface ReasonCount {
  count: number
  /** Up to {@link SAMPLES_PER_REASON} legacy ids. */
  samples: string[]
}

/** One sampled reject: the row, the ledger key it is kept under, the field at fault and why. */
export interface RejectSample {
  readonly legacyId: string
  /** The item's key in the ledger (`~legacy:<id>…` when the row never got one of the platform's). */
  readonly targetKey: string
  /** The field (path) at fault, e.g. `text`, `customData`, `guid`. */
  readonly field: string
  /** The reason as `chatferry rejects` shows it, without the field. */
  readonly problem: string
}

export interface EntityPlanSummary {
  /** Source rows read in this run: {@link records} + {@link problems}. */
  sourceRows: number
  /** Rows that became records. */
  records: number
  /** Rows that could not (unreadable, NULL or duplicate key): rejected with their reason. */
  problems: number
  /**
   * `SELECT count(*)` of the entity's query in the same snapshot (`PlanJobOptions.countSource`);
   * null when not counted. Anything but {@link sourceRows} means rows were missed or read twice.
   */
  sourceCount: number | null
  /** What the sink did with the mapped items (new, updated, unchanged, loaded-but-changed). */
  ledger: PlanCounts
  /** Mapped items (a split message counts each part). */
  items: number
  /** Skipped by policy: `policy: reason → count`. */
  skipped: Record<string, ReasonCount>
  /** Rejected (unreadable row or unmappable record): `reason → count + samples`. */
  rejected: Record<string, ReasonCount>
  /** The samples of {@link rejected}, per reason, with their ledger key, field and exact problem. */
  rejectSamples: Record<string, RejectSample[]>
  /** Extra items planned for this entity's records (placeholders, the system user), by reason. */
  extras: Record<string, number>
  /** Policy outcomes of this entity's records, `policy: outcome → count + samples` (id renames, clamps…). */
  outcomes: Record<string, ReasonCount>
  /** Referential problems: references to unknown users, groups or thread parents. */
  referential: Record<string, ReasonCount>
  /** Records changed at or after `PlanJobOptions.changedSince`. */
  changedSince: ReasonCount
  /** True when the entity's read had already completed and was not repeated. */
  alreadyRead: boolean
  /** Update intents of loaded items this run found (changes and vanished rows), by kind and policy. */
  updates: UpdateTally
  /** What the ledger recorded of them (a repeated report is recorded once; a newer intent supersedes a planned one). */
  updatesRecorded: RecordedUpdates
  /** Loaded items whose legacy row is gone from the source; null when not compared in this run. */
  vanished: number | null
  /** True when so many were gone that nothing was recorded (`changes.vanished.maxShare`). */
  vanishedRefused: boolean
  /**
   * Source rows the ledger had never planned, found by the key reconciliation and planned in this
   * run (counted in {@link sourceRows} and {@link ledger} too); null when the keys were not reconciled.
   */
  unplanned: number | null
}

/** Zero counts. */
export function emptySummary(): EntityPlanSummary {
  return {
    sourceRows: 0,
    records: 0,
    problems: 0,
    sourceCount: null,
    ledger: emptyCounts(),
    items: 0,
    skipped: {},
    rejected: {},
    rejectSamples: {},
    extras: {},
    outcomes: {},
    referential: {},
    changedSince: { count: 0, samples: [] },
    alreadyRead: false,
    updates: {},
    updatesRecorded: noUpdates(),
    vanished: null,
    vanishedRefused: false,
    unplanned: null,
  }
}

export function addCounts(into: PlanCounts, from: PlanCounts): void {
  for (const k of Object.keys(into) as (keyof PlanCounts)[]) {
    into[k] += from[k]
  }
}

/** Counts one occurrence of `reason` with a sample legacy id. */
export function note(map: Record<string, ReasonCount>, reason: string, legacyId: string): void {
  const entry = (map[reason] ??= { count: 0, samples: [] })
  entry.count++
  if (entry.samples.length < SAMPLES_PER_REASON) {
    entry.samples.push(legacyId)
  }
}

/** Counts a reject under `reason`, keeping the sample's key, field and problem with its legacy id. */
export function noteReject(summary: EntityPlanSummary, reason: string, sample: RejectSample): void {
  note(summary.rejected, reason, sample.legacyId)
  const samples = (summary.rejectSamples[reason] ??= [])
  if (samples.length < SAMPLES_PER_REASON) {
    samples.push(sample)
  }
}

export function noteOne(entry: ReasonCount, legacyId: string): void {
  entry.count++
  if (entry.samples.length < SAMPLES_PER_REASON) {
    entry.samples.push(legacyId)
  }
}
