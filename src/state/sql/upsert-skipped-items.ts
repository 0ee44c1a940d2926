import { type Kysely, sql } from 'kysely'

import type { Entity } from '../../target/schemas.ts'
import { placeholderKey } from '../payload.ts'
import type { SkippedItem } from '../plan-items.ts'
import { storableKey, storableText } from '../safe-text.ts'
import type { StateDatabase } from '../schema.ts'

/**
 * Writes items refused by policy as `skipped` in `chatferry.items` (one statement; the last item of
 * a key wins), with the reason, dropping any payload. An item that is loaded or on the wire is never
 * downgraded. Returns the rows written.
 */
export async function upsertSkippedItems(db: Kysely<StateDatabase>, jobId: string, entity: Entity, items: readonly SkippedItem[]): Promise<number> {
  if (items.length === 0) {
    return 0
  }
  const byKey = new Map<string, SkippedItem>()
  for (const it of items) {
    byKey.set(it.targetKey !== undefined ? storableKey(it.targetKey) : placeholderKey(it.legacyId), it)
  }
  const keys = [...byKey.keys()]
  const legacy = [...byKey.values()].map((i) => storableText(String(i.legacyId)))
  const reasons = [...byKey.values()].map((i) => storableText(i.reason))
  // Never downgrades an item that is loaded or on the wire.
  const r = await sql`
    insert into chatferry.items as i (job_id, entity, legacy_id, target_key, status, last_error_code, last_error_message)
    select ${jobId}, ${entity}, t.l, t.k, 'skipped', 'SKIPPED', t.r
    from unnest(${legacy}::text[], ${keys}::text[], ${reasons}::text[]) as t(l, k, r)
    on conflict (job_id, entity, target_key) do update set
      status = 'skipped', last_error_code = 'SKIPPED', last_error_message = excluded.last_error_message,
      payload = null, payload_hash = null, updated_at = now()
    where i.status in ('planned', 'rejected', 'skipped')`.execute(db)
  return Number(r.numAffectedRows ?? 0)
}
