/**
 * Parts of a record's earlier items that its new mapping no longer has — the later parts of a
 * split message once `longText` is `truncate`, or once an edit shortened its text — found in the
 * planning transaction of its page (`planPage`) and taken off: a loaded part gets the removal the
 * planner's classifier gives it (a `message.delete` through the update lane), a part not sent yet
 * is skipped with the planner's reason. A part on the wire (`sent`) is left: it settles as loaded,
 * and is found again the next time its record changes.
 *
 * Only records whose item changed are looked at, and only by the candidate keys the planner names
 * (`PlannedChanges.orphans`): on a bulk load nothing is asked, on a delta one index read per page.
 */
import type { Kysely } from 'kysely'

import { type ChangeClassifier, intentsOf, recordIntents, storedPayload } from './changed-items.ts'
import type { ConflictPolicy, StateDatabase } from './schema.ts'
import { noUpdates, type RecordedUpdates, type UpdateIntent } from './sql/insert-update-intents.ts'
import { selectItemsByKeys } from './sql/select-items-by-keys.ts'
import { upsertSkippedItems } from './sql/upsert-skipped-items.ts'

/** What the planner says about parts: which keys a record's earlier mapping may have had, and the skip reason of one it no longer has. */
export interface OrphanedParts {
  /** Target keys the record's items may have had before besides `kept` (its items now). */
  candidates(legacyId: string, kept: readonly string[]): readonly string[]
  /** The skip reason an orphaned part is classified and skipped with (`policy:<name>: <why>`). */
  readonly reason: string
}

/** Of a page's changed records, their orphaned parts: removals recorded, pending ones skipped. */
export async function recordOrphanedParts(
  db: Kysely<StateDatabase>,
  jobId: string,
  entity: string,
  kept: ReadonlyMap<string, readonly string[]>,
  orphans: OrphanedParts,
  classify: ChangeClassifier,
  conflicts: ConflictPolicy,
): Promise<{ recorded: RecordedUpdates; skipped: number }> {
  const ownerOf = new Map<string, string>()
  for (const [legacyId, keys] of kept) {
    const mine = new Set(keys)
    for (const key of orphans.candidates(legacyId, keys)) {
      if (!mine.has(key)) {
        ownerOf.set(key, legacyId)
      }
    }
  }
  const found = (await selectItemsByKeys(db, jobId, entity, [...ownerOf.keys()])).filter((r) => ownerOf.get(r.targetKey) === r.legacyId)
  const intents: UpdateIntent[] = []
  for (const row of found.filter((r) => r.status === 'done' && !r.vanished)) {
    const verdict = classify({
      legacyId: row.legacyId,
      targetKey: row.targetKey,
      before: storedPayload(row.payload),
      after: { skipped: orphans.reason },
    })
    intents.push(...intentsOf(row, verdict, null))
  }
  const recorded = intents.length > 0 ? await recordIntents(db, jobId, entity, intents, conflicts) : noUpdates()
  const pending = found.filter((r) => r.status === 'planned' || r.status === 'rejected')
  const skipped = await upsertSkippedItems(
    db,
    jobId,
    entity as Parameters<typeof upsertSkippedItems>[2],
    pending.map((r) => ({ legacyId: r.legacyId, targetKey: r.targetKey, reason: orphans.reason })),
  )
  return { recorded, skipped }
}
