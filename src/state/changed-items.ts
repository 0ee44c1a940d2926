/**
 * Changes of loaded items inside a planning transaction (`planPage` with a classifier): each done
 * item whose new payload differs from the stored one — or whose record a policy now skips — is
 * handed to the planner's classifier (`src/plan/change-intents.ts`), and the update intents it
 * returns are recorded with the page. The stored payload stays what the platform has or will have
 * once its planned updates are sent: it becomes the new payload only when the classifier says so
 * (see mappings/README.md "Changes after the bulk load").
 */
import type { Kysely } from 'kysely'

import { holdConflicts } from './conflict-hold.ts'
import type { SkippedItem } from './plan-items.ts'
import type { ConflictPolicy, StateDatabase, UpdateKind } from './schema.ts'
import { insertUpdateIntents, type RecordedUpdates, type UpdateIntent } from './sql/insert-update-intents.ts'
import { selectLoadedItems } from './sql/select-loaded-items.ts'
import { updateItemsVanished } from './sql/update-items-vanished.ts'

/** A loaded item whose record changed, as the classifier sees it. */
export interface ChangedItem {
  readonly legacyId: string
  readonly targetKey: string
  /** The stored payload (what the platform has); null when its removal was planned by an earlier delta. */
  readonly before: Readonly<Record<string, unknown>> | null
  /** The new payload, or the skip reason of a record a policy now refuses. */
  readonly after: Readonly<Record<string, unknown>> | { readonly skipped: string }
}

/** The classifier's verdict on one changed item. */
export interface ChangeVerdict {
  readonly intents: readonly Omit<UpdateIntent, 'legacyId' | 'targetKey' | 'payloadHash'>[]
  /** True: the stored payload becomes the new one (nothing visible changed, or a change is applied). */
  readonly advance: boolean
}

/** The planner's comparison of a loaded item's change (`src/plan/change-intents.ts`); pure. */
export type ChangeClassifier = (item: ChangedItem) => ChangeVerdict

/** Kinds that take an item off the platform: planning one marks the item `vanished_at`. */
const REMOVALS: ReadonlySet<UpdateKind> = new Set(['user.deactivate', 'group.delete', 'member.kick', 'message.delete'])

/** Parses a stored payload; a payload that is not a JSON object compares as an empty one. */
export function storedPayload(text: string | null): Readonly<Record<string, unknown>> {
  try {
    const v = text === null ? {} : (JSON.parse(text) as unknown)
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {}
  } catch {
    return {}
  }
}

/** The verdict's intents as the ledger records them; applied intents of an advancing item carry the new payload's hash. */
export function intentsOf(item: { legacyId: string; targetKey: string }, verdict: ChangeVerdict, newHash: string | null): UpdateIntent[] {
  return verdict.intents.map((i) => ({
    ...i,
    legacyId: item.legacyId,
    targetKey: item.targetKey,
    payloadHash: verdict.advance && i.policy === 'apply' && !i.kind.endsWith('.unchangeable') ? newHash : null,
  }))
}

/** A done item the page brings a new payload for: its stored payload and whether its removal was planned. */
export interface HeldDoneItem {
  readonly legacyId: string
  readonly targetKey: string
  readonly payload: string | null
  readonly vanished: boolean
}

/**
 * Classifies the page's changed done items: returns the intents to record and the target keys
 * whose stored payload must stay (every change only reported or ignored).
 */
export function classifyDone(
  changed: readonly { held: HeldDoneItem; after: unknown; hash: string }[],
  classify: ChangeClassifier,
): { intents: UpdateIntent[]; keep: Set<string> } {
  const intents: UpdateIntent[] = []
  const keep = new Set<string>()
  for (const { held, after, hash } of changed) {
    const verdict = classify({
      legacyId: held.legacyId,
      targetKey: held.targetKey,
      before: held.vanished ? null : storedPayload(held.payload),
      after: typeof after === 'string' ? storedPayload(after) : (after as Record<string, unknown>),
    })
    intents.push(...intentsOf(held, verdict, hash))
    if (!verdict.advance) {
      keep.add(held.targetKey)
    }
  }
  return { intents, keep }
}

/**
 * The loaded items of records a policy now skips: classified, their intents recorded, and an
 * applied removal marks its item `vanished_at` (planned once; a record that comes back is re-added).
 */
export async function recordSkippedChanges(
  db: Kysely<StateDatabase>,
  jobId: string,
  entity: string,
  skips: readonly SkippedItem[],
  classify: ChangeClassifier,
  conflicts: ConflictPolicy = 'report',
): Promise<RecordedUpdates> {
  const reasons = new Map(skips.map((s) => [String(s.legacyId), s.reason]))
  const loaded = await selectLoadedItems(db, jobId, entity, [...reasons.keys()], true)
  const intents: UpdateIntent[] = []
  for (const row of loaded) {
    const verdict = classify({ ...row, before: storedPayload(row.payload), after: { skipped: reasons.get(row.legacyId) ?? '' } })
    intents.push(...intentsOf(row, verdict, null))
  }
  return recordIntents(db, jobId, entity, intents, conflicts)
}

/**
 * Records intents of loaded items under the conflict policy; an applied removal marks its item
 * `vanished_at` (planned once; a record that comes back is re-added).
 */
export async function recordIntents(
  db: Kysely<StateDatabase>,
  jobId: string,
  entity: string,
  intents: readonly UpdateIntent[],
  conflicts: ConflictPolicy,
): Promise<RecordedUpdates> {
  const held = await holdConflicts(db, jobId, entity, intents, conflicts)
  const recorded = await insertUpdateIntents(db, jobId, entity, held)
  const removed = held.filter((i) => i.policy === 'apply' && i.heldBack === undefined && REMOVALS.has(i.kind)).map((i) => i.targetKey)
  await updateItemsVanished(db, jobId, entity, removed)
  return recorded
}
