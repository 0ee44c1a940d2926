/**
 * Which parts of a split message can be left over when its new mapping has fewer items: the keys
 * `<muid>-p2` … `<muid>-pN` (`mappings/message-long-text.ts`), for the ledger to look up in the
 * planning transaction of the page (`src/state/orphaned-parts.ts`) and, in the dry run, read-only.
 * A leftover part is classified as skipped with {@link ORPHANED_PART_REASON}: `message-changes.ts`
 * turns it into a `message.delete` of the part under `changes.edits`.
 */
import { messageMuid, partMuid } from '../../mappings/index.ts'
import type { LegacyEntity } from '../model/index.ts'
import { type ChangeClassifier, type OrphanedParts, type PlannedItem, storedPayload } from '../state/index.ts'
import type { ClassifyInto } from './classify-items.ts'
import { skipReason } from './lookups.ts'
import { ORPHANED_PART_POLICY } from './message-changes.ts'

/** Parts looked for beyond the current `longText.maxParts`, for a message split under a larger one. @default the policy's default */
const LEAST_PARTS = 20

export const ORPHANED_PART_REASON = skipReason(ORPHANED_PART_POLICY, 'no longer a part of its message (its text now takes fewer parts)')

/** The candidate keys of a message's earlier parts: messages only (no other record maps to several items). */
export function orphanedParts(entity: LegacyEntity, maxParts: number): OrphanedParts | undefined {
  if (entity !== 'messages') {
    return undefined
  }
  const parts = Math.max(maxParts, LEAST_PARTS)
  return {
    reason: ORPHANED_PART_REASON,
    candidates(legacyId, kept) {
      const muid = messageMuid(legacyId)
      const out: string[] = []
      for (let n = Math.max(2, kept.length + 1); n <= parts; n++) {
        out.push(partMuid(muid, n))
      }
      return out
    },
  }
}

/**
 * The dry run's view of the same: of the page's records whose loaded item changed (`changedIds`),
 * the loaded parts the new mapping no longer has are classified like a run would (the removal
 * tallied; nothing written).
 */
export async function previewOrphanedParts(
  into: Pick<ClassifyInto, 'jobId' | 'session'>,
  entity: LegacyEntity,
  items: readonly PlannedItem[],
  changedIds: ReadonlySet<string>,
  orphans: OrphanedParts | undefined,
  classify: ChangeClassifier,
): Promise<void> {
  if (orphans === undefined || changedIds.size === 0) {
    return
  }
  const kept = new Map<string, string[]>()
  for (const item of items) {
    if (changedIds.has(item.legacyId)) {
      ;(kept.get(item.legacyId) ?? kept.set(item.legacyId, []).get(item.legacyId))?.push(item.targetKey)
    }
  }
  const ownerOf = new Map<string, string>()
  for (const [legacyId, keys] of kept) {
    for (const key of orphans.candidates(legacyId, keys)) {
      if (!keys.includes(key)) {
        ownerOf.set(key, legacyId)
      }
    }
  }
  const keys = [...ownerOf.keys()]
  for (const row of await into.session.knownItems(
    into.jobId,
    entity,
    keys,
    keys.map(() => ''),
  )) {
    const legacyId = ownerOf.get(row.target_key)
    if (legacyId !== undefined && row.status === 'done' && !row.vanished && row.payload !== null) {
      classify({ legacyId, targetKey: row.target_key, before: storedPayload(row.payload), after: { skipped: orphans.reason } })
    }
  }
}
