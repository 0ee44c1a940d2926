import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/** The six characters `\u0000` as they appear in JSON text. */
const NUL_ESCAPE = '\\u0000'

/**
 * Of the given items, skips those still `planned` whose payload's `sentAt` (epoch seconds) is
 * before `sentBefore`: messages that aged out of the platform's retention window since planning.
 * Written as planning writes a retention skip (`SKIPPED`, the reason, no payload). Called by the
 * packer under the job lock, before it packs these items. Returns the ids skipped.
 *
 * A payload holding the JSON escape `\u0000` cannot be read as json/jsonb in Postgres (the cast
 * throws and would fail the whole packing), so such an item is left to be sent and judged by the
 * platform like any other poison row; `case` keeps the cast from being evaluated for it.
 */
export async function skipAgedOutItems(
  db: Kysely<StateDatabase>,
  args: { ids: readonly number[]; sentBefore: number; reason: string },
): Promise<number[]> {
  if (args.ids.length === 0) {
    return []
  }
  const r = await sql<{ id: number }>`
    update chatferry.items set status = 'skipped', last_error_code = 'SKIPPED', last_error_message = ${args.reason},
      payload = null, payload_hash = null, updated_at = now()
    where id = any(${[...args.ids]}::bigint[]) and status = 'planned'
      and case when strpos(payload, ${NUL_ESCAPE}) > 0 then false
        else (payload::jsonb ->> 'sentAt')::float8 < ${args.sentBefore}::float8 end
    returning id`.execute(db)
  return r.rows.map((row) => Number(row.id))
}
