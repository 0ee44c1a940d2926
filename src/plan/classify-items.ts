/**
 * The dry run's verdict on a page of mapped items: each one's {@link Fate} against what the ledger
 * holds for its target key, counted like the ledger would count the write it does not do.
 */
import type { LegacyEntity } from '../model/index.ts'
import {
  type ChangeClassifier,
  type DryRunSession,
  emptyCounts,
  type KnownItemRow,
  payloadHash,
  type PlanCounts,
  type PlannedItem,
  type SkippedItem,
} from '../state/index.ts'
import { changedFields } from './changed-fields.ts'
import { type ReasonCount, SAMPLES_PER_REASON } from './plan-summary.ts'
import { countMinute, type MinuteCounts } from './retention-edge.ts'
import type { ConflictTally } from './update-tally.ts'

export const FATES = ['new', 'pending', 'pendingChanged', 'replanned', 'loadedUnchanged', 'loadedChanged'] as const
/** What the dry run predicts for one mapped item (see `dry-run.ts`). */
export type Fate = (typeof FATES)[number]
export type FateCounts = Record<Fate, number>

export interface DryRunEntity {
  fates: FateCounts
  /** Of loaded-but-changed (and pending-changed) items: field path → count + samples (legacy ids). */
  changedFields: Record<string, ReasonCount>
  /** Samples per fate: `legacyId → targetKey`. */
  samples: Partial<Record<Fate, { legacyId: string; targetKey: string }[]>>
  /** Messages a run would send, per minute of `sentAt` (for the retention edge). */
  toSendMinutes: MinuteCounts
  /**
   * Of the update intents a delta would record, the `apply` ones whose item changed on the platform
   * after chatferry last wrote it, by kind and what `changes.conflicts` does with them (`conflict-preview.ts`).
   */
  conflicts: ConflictTally
}

export function emptyDryRunEntity(): DryRunEntity {
  return {
    fates: { new: 0, pending: 0, pendingChanged: 0, replanned: 0, loadedUnchanged: 0, loadedChanged: 0 },
    changedFields: {},
    samples: {},
    toSendMinutes: new Map(),
    conflicts: {},
  }
}

/** Where {@link classifyItems} counts its verdicts. */
export interface ClassifyInto {
  readonly jobId: string
  readonly session: DryRunSession
  readonly entities: Record<LegacyEntity, DryRunEntity>
  /** Keys of items to send per entity, when collected (users, groups and members only). */
  readonly toSend: Record<LegacyEntity, Set<string>> | undefined
}

/**
 * Classifies a page's items against the ledger (one query); returns them counted as {@link PlanCounts}.
 * `changes`: a loaded item whose payload changed is compared like a delta would (its update intents
 * are tallied by the classifier, nothing is written).
 */
export async function classifyItems(
  into: ClassifyInto,
  entity: LegacyEntity,
  items: readonly PlannedItem[],
  changes?: ChangeClassifier,
): Promise<PlanCounts> {
  const counts = emptyCounts()
  if (items.length === 0) {
    return counts
  }
  const byKey = new Map<string, PlannedItem>()
  for (const item of items) {
    byKey.set(item.targetKey, item)
  }
  counts.duplicates += items.length - byKey.size
  // A ledger without items of this entity knows none of them: each one is new, whatever its hash.
  const known = (await into.session.hasItems?.(into.jobId, entity)) === false ? undefined : await knownOf(into, entity, byKey)
  const mine = into.entities[entity]
  for (const [key, item] of byKey) {
    const was = known?.rows.get(key)
    const fate = was === undefined ? newItem(counts) : fateOf(was, known?.hashes.get(key) as string, counts)
    mine.fates[fate]++
    const list = (mine.samples[fate] ??= [])
    if (list.length < SAMPLES_PER_REASON) {
      list.push({ legacyId: item.legacyId, targetKey: key })
    }
    if ((fate === 'loadedChanged' || fate === 'pendingChanged') && was?.payload) {
      noteChangedFields(mine, was.payload, item)
    }
    if (fate === 'loadedChanged' && changes && was) {
      const after =
        typeof item.payload === 'string' ? (JSON.parse(item.payload) as Record<string, unknown>) : (item.payload as Record<string, unknown>)
      changes({ legacyId: item.legacyId, targetKey: key, before: was.vanished ? null : parsed(was.payload), after })
    }
    const sends = fate === 'new' || fate === 'pending' || fate === 'pendingChanged' || fate === 'replanned'
    if (into.toSend && entity !== 'messages' && sends) {
      into.toSend[entity].add(key)
    }
    if (entity === 'messages' && sends) {
      countMinute(mine.toSendMinutes, (item.sortKey ?? 0) * 1000)
    }
  }
  return counts
}

/** The ledger's rows for these items' target keys, and the hash of each item's new payload. */
async function knownOf(into: ClassifyInto, entity: LegacyEntity, byKey: ReadonlyMap<string, PlannedItem>): Promise<KnownItems> {
  const hashes = new Map<string, string>()
  for (const [key, item] of byKey) {
    hashes.set(key, payloadHash(typeof item.payload === 'string' ? item.payload : JSON.stringify(item.payload)))
  }
  const old = await into.session.knownItems(into.jobId, entity, [...byKey.keys()], [...hashes.values()])
  return { rows: new Map(old.map((r) => [r.target_key, r])), hashes }
}

/** The ledger's rows by target key, and the new payload hash of every item looked up. */
interface KnownItems {
  readonly rows: ReadonlyMap<string, KnownItemRow>
  readonly hashes: ReadonlyMap<string, string>
}

/** An item the ledger has never seen, counted in `counts`. */
function newItem(counts: PlanCounts): Fate {
  counts.inserted++
  return 'new'
}

/** An item's fate given what the ledger holds for its key, counted in `counts`. */
function fateOf(was: KnownItemRow, hash: string, counts: PlanCounts): Fate {
  if (was.status === 'rejected' || was.status === 'skipped') {
    counts.replanned++
    return 'replanned'
  }
  if (was.status === 'done') {
    // Against what the platform has or will have once its planned updates are sent (a change only
    // reported is still a change: its stored payload stayed); a removed item that comes back too.
    if (was.payload_hash === hash && !was.vanished) {
      counts.unchanged++
      return 'loadedUnchanged'
    }
    counts.loadedButChanged++
    return 'loadedChanged'
  }
  if (was.payload_hash === hash) {
    counts.unchanged++
    return 'pending'
  }
  counts.updated++
  return 'pendingChanged'
}

/**
 * The loaded items of records a policy now skips (a message deleted in the source…), compared like
 * a delta would: their intents are tallied by the classifier.
 */
export async function classifySkips(
  into: ClassifyInto,
  entity: LegacyEntity,
  skips: readonly SkippedItem[],
  changes: ChangeClassifier,
): Promise<void> {
  if (skips.length === 0 || (await into.session.hasItems?.(into.jobId, entity)) === false) {
    return
  }
  const reasons = new Map(skips.map((s) => [String(s.legacyId), s.reason]))
  for (const row of await into.session.loadedItems(into.jobId, entity, [...reasons.keys()])) {
    changes({ ...row, before: parsed(row.payload), after: { skipped: reasons.get(row.legacyId) ?? '' } })
  }
}

function parsed(text: string | null): Record<string, unknown> {
  const v = text === null ? {} : (JSON.parse(text) as unknown)
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {}
}

function noteChangedFields(mine: DryRunEntity, storedPayload: string, item: PlannedItem): void {
  const before = JSON.parse(storedPayload) as unknown
  const after = typeof item.payload === 'string' ? (JSON.parse(item.payload) as unknown) : item.payload
  for (const field of changedFields(before, after)) {
    const entry = (mine.changedFields[field] ??= { count: 0, samples: [] })
    entry.count++
    if (entry.samples.length < SAMPLES_PER_REASON) {
      entry.samples.push(item.legacyId)
    }
  }
}
