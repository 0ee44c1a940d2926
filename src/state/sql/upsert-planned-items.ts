import { type Kysely, sql } from 'kysely'

import type { Entity } from '../../target/schemas.ts'
import { type ChangeClassifier, classifyDone, type HeldDoneItem } from '../changed-items.ts'
import { holdConflicts } from '../conflict-hold.ts'
import type { OrphanedParts } from '../orphaned-parts.ts'
import { ledgerSortKey, payloadHash, payloadText } from '../payload.ts'
import type { PlanCounts, PlannedItem, RejectedItem } from '../plan-items.ts'
import { storableKey, storableText } from '../safe-text.ts'
import type { ConflictPolicy, ItemStatus, StateDatabase } from '../schema.ts'
import { addRecorded, insertUpdateIntents, type RecordedUpdates } from './insert-update-intents.ts'

/** How a page's changed done items become update intents (absent: recorded as loaded-but-changed and overwritten, as before issue 13). */
export interface PlannedChanges {
  readonly classify: ChangeClassifier
  /** Where the intents recorded are counted. */
  readonly recorded: RecordedUpdates
  /** `changes.conflicts`: what happens to a change of an item changed on the platform (absent: `report`). */
  readonly conflicts?: ConflictPolicy
  /**
   * Records that map to several items (a split message): the keys their earlier items may have had,
   * so a part the new mapping no longer has is taken off (`orphaned-parts.ts`). Absent: not looked for.
   */
  readonly orphans?: OrphanedParts
}

/** What writing a page's items found besides the counts. */
export interface UpsertedItems {
  /** Items refused because another legacy row holds their target key (see {@link upsertPlannedItems}). */
  readonly collisions: RejectedItem[]
  /** Legacy ids whose known item changed (or came back), with the target keys of all their items on this page. */
  readonly changed: Map<string, string[]>
}

/**
 * Writes a page's planned items into `chatferry.items`: an insert of the new keys, then an update
 * of the known items whose payload changed, each counted into `counts` (see {@link PlanCounts}).
 * Returns the items it refused because another legacy row already holds their target key in the
 * ledger (written by the caller as `DUPLICATE_TARGET_KEY` rejects, so the second row is neither
 * lost nor allowed to overwrite the first). Two rows of one page are caught by the planner before
 * this; this catches the ones on different pages or runs.
 */
export async function upsertPlannedItems(
  db: Kysely<StateDatabase>,
  jobId: string,
  entity: Entity,
  items: readonly PlannedItem[],
  counts: PlanCounts,
  changes?: PlannedChanges,
): Promise<UpsertedItems> {
  const changed = new Map<string, string[]>()
  if (items.length === 0) {
    return { collisions: [], changed }
  }
  // One statement cannot touch a row twice: the last occurrence of a key wins.
  const byKey = new Map<string, PlannedItem>()
  for (const item of items) {
    byKey.set(storableKey(item.targetKey), item)
  }
  counts.duplicates += items.length - byKey.size
  const legacy: string[] = []
  const keys: string[] = []
  const payloads: string[] = []
  const hashes: string[] = []
  const sorts: number[] = []
  for (const [key, item] of byKey) {
    const text = payloadText(item.payload)
    legacy.push(storableText(String(item.legacyId)))
    keys.push(key)
    payloads.push(text)
    hashes.push(payloadHash(text))
    sorts.push(ledgerSortKey(entity, item.payload, item.sortKey))
  }
  // "New" is what this call inserted, as the insert itself reports it: a concurrent planner of
  // the same job that inserted a key first makes it "unchanged" (or "updated") here, never new twice.
  const inserted = await sql<{ target_key: string }>`
    insert into chatferry.items (job_id, entity, legacy_id, target_key, payload, payload_hash, sort_key, status)
    select ${jobId}, ${entity}, t.l, t.k, t.p, t.h, t.s, 'planned'
    from unnest(${legacy}::text[], ${keys}::text[], ${payloads}::text[], ${hashes}::text[], ${sorts}::bigint[]) as t(l, k, p, h, s)
    on conflict (job_id, entity, target_key) do nothing
    returning target_key`.execute(db)
  counts.inserted += inserted.rows.length
  const mine = new Set(inserted.rows.map((r) => r.target_key))
  const known = [...keys.keys()].filter((i) => !mine.has(keys[i] as string))
  if (known.length === 0) {
    return { collisions: [], changed }
  }
  // Classify the known ones against what the ledger holds (locked, so a concurrent planner cannot
  // race us); a done item's stored payload travels only when the new one differs (or its removal
  // was planned: a record that comes back is re-added even when unchanged).
  const old = await sql<{
    target_key: string
    legacy_id: string
    status: ItemStatus
    payload_hash: string | null
    payload: string | null
    vanished: boolean
  }>`
    select i.target_key, i.legacy_id, i.status, i.payload_hash, i.vanished_at is not null as vanished,
      case when i.status = 'done' and (i.payload_hash is distinct from t.h or i.vanished_at is not null) then i.payload end as payload
    from unnest(${known.map((i) => keys[i] as string)}::text[], ${known.map((i) => hashes[i] as string)}::text[]) as t(k, h)
    join chatferry.items i on i.job_id = ${jobId} and i.entity = ${entity} and i.target_key = t.k
    for update of i`.execute(db)
  const held = new Map(old.rows.map((r) => [r.target_key, r]))
  const collisions: RejectedItem[] = []
  const rest = known.filter((i) => {
    const was = held.get(keys[i] as string)
    if (was === undefined || was.legacy_id === legacy[i]) {
      return true
    }
    collisions.push({
      legacyId: legacy[i] as string,
      targetKey: `~legacy:${legacy[i] as string}#duplicate-of:${was.legacy_id}`,
      code: 'DUPLICATE_TARGET_KEY',
      message: `targetKey: legacy rows ${was.legacy_id} and ${legacy[i] as string} both map to ${keys[i] as string}; the first (${was.legacy_id}) is kept`,
      // No payload: `retry-rejected` must not send it, the first row owns the key on the platform.
    })
    return false
  })
  counts.duplicates += collisions.length
  if (rest.length === 0) {
    return { collisions, changed }
  }
  const changedDone: { held: HeldDoneItem; after: unknown; hash: string }[] = []
  for (const i of rest) {
    const was = held.get(keys[i] as string)
    if (was === undefined || (was.payload_hash === hashes[i] && !was.vanished)) {
      counts.unchanged++
    } else if (was.status === 'rejected' || was.status === 'skipped') {
      counts.replanned++
    } else if (was.status === 'done') {
      counts.loadedButChanged++
      const item = byKey.get(keys[i] as string) as PlannedItem
      changedDone.push({
        held: { ...was, legacyId: legacy[i] as string, targetKey: keys[i] as string },
        after: item.payload,
        hash: hashes[i] as string,
      })
    } else {
      counts.updated++
    }
    if (was !== undefined && (was.payload_hash !== hashes[i] || was.vanished)) {
      changed.set(legacy[i] as string, [])
    }
  }
  for (const [key, item] of byKey) {
    changed.get(storableText(String(item.legacyId)))?.push(key)
  }
  // A changed done item yields update intents; its payload stays when every change is only reported.
  const verdicts = changes ? classifyDone(changedDone, changes.classify) : undefined
  if (changes && verdicts) {
    const intents = await holdConflicts(db, jobId, entity, verdicts.intents, changes.conflicts ?? 'report')
    addRecorded(changes.recorded, await insertUpdateIntents(db, jobId, entity, intents))
  }
  const write = verdicts ? rest.filter((i) => !verdicts.keep.has(keys[i] as string)) : rest
  const pick = <T>(values: T[]) => write.map((i) => values[i] as T)
  // A rejected or skipped item that comes back with a new payload is planned again; a done item
  // keeps its status and `loaded_hash` (its changes go through the update lane, never resent), and a
  // re-added one is no longer vanished.
  await sql`
    update chatferry.items as i set
      legacy_id = t.l,
      payload = t.p,
      payload_hash = t.h,
      sort_key = t.s,
      status = case when i.status in ('rejected', 'skipped') then 'planned' else i.status end,
      attempts = case when i.status in ('rejected', 'skipped') then 0 else i.attempts end,
      last_error_code = case when i.status in ('rejected', 'skipped') then null else i.last_error_code end,
      last_error_message = case when i.status in ('rejected', 'skipped') then null else i.last_error_message end,
      vanished_at = null,
      updated_at = now()
    from unnest(${pick(legacy)}::text[], ${pick(keys)}::text[], ${pick(payloads)}::text[], ${pick(hashes)}::text[], ${pick(sorts)}::bigint[]) as t(l, k, p, h, s)
    where i.job_id = ${jobId} and i.entity = ${entity} and i.target_key = t.k
      and (i.payload_hash is distinct from t.h or i.vanished_at is not null)
  `.execute(db)
  return { collisions, changed }
}
