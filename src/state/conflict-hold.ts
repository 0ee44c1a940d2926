/**
 * The conflict policy where intents are recorded (`changes.conflicts`, issue 15): an `apply` intent
 * of an item changed on the platform after chatferry last wrote it (a `platform` event the receiver
 * stored, select-platform-conflicts.ts) is held back — `report`: recorded `conflict`, `platform-wins`:
 * recorded `dropped`. `source-wins` changes nothing. The update lane checks again
 * just before it sends (src/load/settle-update.ts): an event may arrive in between.
 *
 * The dry run (`chatferry plan`) asks the same question read-only ({@link previewConflicts}): one
 * rule, {@link conflictOf}, decides both, so the plan shows what a delta would hold back, drop, or —
 * under `source-wins` — overwrite.
 */
import type { Kysely } from 'kysely'

import type { ConflictPolicy, StateDatabase, UpdateKind, UpdatePolicy } from './schema.ts'
import type { UpdateIntent } from './sql/insert-update-intents.ts'
import { type PlatformConflictRow, selectPlatformConflicts } from './sql/select-platform-conflicts.ts'

/** What becomes of a conflicted `apply` intent: held back (`report`), dropped (`platform-wins`), or sent over the platform's change (`source-wins`). */
export type ConflictOutcome = 'conflict' | 'dropped' | 'overwrites'

const OUTCOME_OF: Record<ConflictPolicy, ConflictOutcome> = { report: 'conflict', 'platform-wins': 'dropped', 'source-wins': 'overwrites' }

/** What of an intent the rule looks at. */
export type ConflictCandidate = Pick<UpdateIntent, 'kind' | 'policy' | 'targetKey' | 'reason'>

/** What the platform said: `changed on the platform after chatferry wrote it (group_updated received …)`. */
export function platformChangeNote(c: Pick<PlatformConflictRow, 'trigger' | 'receivedAt'>): string {
  return `changed on the platform after chatferry wrote it (${c.trigger} received ${c.receivedAt.toISOString()})`
}

/** The reason of an intent held back where it is recorded: its change, and what the platform said. */
export function conflictReason(reason: string, c: Pick<PlatformConflictRow, 'trigger' | 'receivedAt'>): string {
  return `${reason}; ${platformChangeNote(c)}`
}

/** Only an intent the lane would send can conflict: reported, ignored and unchangeable ones change nothing there. */
function sendable(i: { kind: UpdateKind; policy: UpdatePolicy }): boolean {
  return i.policy === 'apply' && !i.kind.endsWith('.unchangeable')
}

/** The items of these intents changed on the platform after chatferry last wrote them, by target key (one query; none for users). */
async function conflictsOf(
  db: Kysely<StateDatabase>,
  jobId: string,
  entity: string,
  intents: readonly ConflictCandidate[],
): Promise<Map<string, PlatformConflictRow>> {
  const keys = [...new Set(intents.filter(sendable).map((i) => i.targetKey))]
  if (keys.length === 0) {
    return new Map()
  }
  return new Map((await selectPlatformConflicts(db, jobId, entity, keys)).map((c) => [c.targetKey, c]))
}

/**
 * The rule, pure: an intent conflicts when the lane would send it and its item changed on the
 * platform (`conflicts`, by target key); then the policy decides its outcome, and its reason names
 * the platform's change. Undefined: no conflict.
 */
export function conflictOf(
  i: ConflictCandidate,
  conflicts: ReadonlyMap<string, Pick<PlatformConflictRow, 'trigger' | 'receivedAt'>>,
  policy: ConflictPolicy,
): { outcome: ConflictOutcome; reason: string } | undefined {
  const c = conflicts.get(i.targetKey)
  return c === undefined || !sendable(i) ? undefined : { outcome: OUTCOME_OF[policy], reason: conflictReason(i.reason, c) }
}

/**
 * Returns the intents with those of conflicted items held back. A held-back intent keeps its payload
 * hash and the item's stored payload advances as for a planned one: it waits, like a planned intent,
 * for `retry-rejected --conflicts` under `source-wins`, and a later change of the item is compared
 * with the source's state, not found again. Runs in the caller's transaction.
 */
export async function holdConflicts(
  db: Kysely<StateDatabase>,
  jobId: string,
  entity: string,
  intents: readonly UpdateIntent[],
  policy: ConflictPolicy,
): Promise<UpdateIntent[]> {
  // Under source-wins nothing is held back: the question is not even asked.
  const conflicts = policy === 'source-wins' ? new Map() : await conflictsOf(db, jobId, entity, intents)
  if (conflicts.size === 0) {
    return [...intents]
  }
  return intents.map((i) => {
    const c = conflictOf(i, conflicts, policy)
    return c === undefined || c.outcome === 'overwrites' ? i : { ...i, heldBack: c.outcome, reason: c.reason }
  })
}

/** One intent the conflict policy would act on, as the dry run counts it. */
export interface ConflictPreview<T extends ConflictCandidate> {
  readonly intent: T
  readonly outcome: ConflictOutcome
  /** The intent's reason with the platform's change (trigger, when it was received), as a delta would record it. */
  readonly reason: string
}

/**
 * The dry run's question, read-only: which of these intents a delta would hold back, drop or (under
 * `source-wins`) send over a change made on the platform — {@link holdConflicts}'s rule, asked under
 * every policy.
 */
export async function previewConflicts<T extends ConflictCandidate>(
  db: Kysely<StateDatabase>,
  jobId: string,
  entity: string,
  intents: readonly T[],
  policy: ConflictPolicy,
): Promise<ConflictPreview<T>[]> {
  const conflicts = await conflictsOf(db, jobId, entity, intents)
  return intents.flatMap((intent) => {
    const c = conflictOf(intent, conflicts, policy)
    return c === undefined ? [] : [{ intent, ...c }]
  })
}
