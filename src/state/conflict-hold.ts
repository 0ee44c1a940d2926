/**
 * The conflict policy where intents are recorded (`changes.conflicts`, issue 15): an `apply` intent
 * of an item changed on the platform after chatferry last wrote it (a `platform` event the receiver
 * stored, select-platform-conflicts.ts) is held back — `report`: recorded `conflict`, `platform-wins`:
 * recorded `dropped`. `source-wins` changes nothing. The update lane checks again
 * just before it sends (src/load/settle-update.ts): an event may arrive in between.
 */
import type { Kysely } from 'kysely'

import type { ConflictPolicy, StateDatabase } from './schema.ts'
import type { UpdateIntent } from './sql/insert-update-intents.ts'
import { type PlatformConflictRow, selectPlatformConflicts } from './sql/select-platform-conflicts.ts'

/** What the platform said: `changed on the platform after chatferry wrote it (group_updated received …)`. */
export function platformChangeNote(c: Pick<PlatformConflictRow, 'trigger' | 'receivedAt'>): string {
  return `changed on the platform after chatferry wrote it (${c.trigger} received ${c.receivedAt.toISOString()})`
}

/** The reason of an intent held back where it is recorded: its change, and what the platform said. */
export function conflictReason(reason: string, c: Pick<PlatformConflictRow, 'trigger' | 'receivedAt'>): string {
  return `${reason}; ${platformChangeNote(c)}`
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
  const sendable = (i: UpdateIntent) => i.policy === 'apply' && !i.kind.endsWith('.unchangeable')
  const keys = [...new Set(intents.filter(sendable).map((i) => i.targetKey))]
  if (policy === 'source-wins' || keys.length === 0) {
    return [...intents]
  }
  const conflicts = new Map((await selectPlatformConflicts(db, jobId, entity, keys)).map((c) => [c.targetKey, c]))
  if (conflicts.size === 0) {
    return [...intents]
  }
  return intents.map((i) => {
    const c = conflicts.get(i.targetKey)
    if (c === undefined || !sendable(i)) {
      return i
    }
    return { ...i, heldBack: policy === 'report' ? 'conflict' : 'dropped', reason: conflictReason(i.reason, c) }
  })
}
