import { type Kysely, sql } from 'kysely'

import type { Entity } from '../../target/schemas.ts'
import { ledgerSortKey, payloadHash, payloadText, placeholderKey } from '../payload.ts'
import type { RejectedItem } from '../plan-items.ts'
import { storableKey, storableText } from '../safe-text.ts'
import type { StateDatabase } from '../schema.ts'

/**
 * Writes items refused as invalid as `rejected` in `chatferry.items` (one statement; the last item
 * of a key wins), with code, message, the refused payload (kept so a fix can be checked) and its
 * sort key (`ledgerSortKey`: a refused message planned again later drains, and ages out, by its
 * time). An item that is loaded or on the wire is never downgraded. Returns the rows written.
 */
export async function upsertRejectedItems(db: Kysely<StateDatabase>, jobId: string, entity: Entity, items: readonly RejectedItem[]): Promise<number> {
  if (items.length === 0) {
    return 0
  }
  const byKey = new Map<string, RejectedItem>()
  for (const it of items) {
    byKey.set(it.targetKey !== undefined ? storableKey(it.targetKey) : placeholderKey(it.legacyId), it)
  }
  const vals = [...byKey.values()]
  const keys = [...byKey.keys()]
  const payloads = vals.map((i) => (i.payload === undefined ? null : payloadText(i.payload)))
  const hashes = payloads.map((p) => (p === null ? null : payloadHash(p)))
  const r = await sql`
    insert into chatferry.items as i (job_id, entity, legacy_id, target_key, payload, payload_hash, sort_key, status, last_error_code, last_error_message)
    select ${jobId}, ${entity}, t.l, t.k, t.p, t.h, t.s, 'rejected', t.c, t.m
    from unnest(${vals.map((i) => storableText(String(i.legacyId)))}::text[], ${keys}::text[], ${payloads}::text[], ${hashes}::text[],
                ${vals.map((i) => ledgerSortKey(entity, i.payload, undefined))}::bigint[],
                ${vals.map((i) => storableText(i.code))}::text[], ${vals.map((i) => storableText(i.message))}::text[]) as t(l, k, p, h, s, c, m)
    on conflict (job_id, entity, target_key) do update set
      status = 'rejected', last_error_code = excluded.last_error_code, last_error_message = excluded.last_error_message,
      payload = excluded.payload, payload_hash = excluded.payload_hash, sort_key = excluded.sort_key, updated_at = now()
    where i.status in ('planned', 'rejected', 'skipped')`.execute(db)
  return Number(r.numAffectedRows ?? 0)
}
