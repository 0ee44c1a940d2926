import { type RawBuilder, sql } from 'kysely'

/** Where a rejected item stands: still to be dealt with, judged by an operator, or fixed since. */
export type RejectStanding = 'open' | 'accepted' | 'superseded'

/**
 * SQL: the standing of the rejected row of `chatferry.items` aliased `alias` (meaningful where its
 * status is `rejected`): `accepted` when an operator accepted it (`chatferry.accepted_rejects`)
 * for the code it still has; `superseded` when it was rejected before it got a key
 * (`~legacy:<id>`, no instance suffix: a duplicate's reject is never superseded) and an item of the
 * same legacy id is done since — the row was fixed in the source and a later read loaded it;
 * otherwise `open`. Both lookups are index probes (the acceptances' key, `items_done_legacy_idx`).
 */
export function rejectStanding(alias: string): RawBuilder<RejectStanding> {
  const col = (c: string) => sql.ref(`${alias}.${c}`)
  return sql<RejectStanding>`case
    when exists (select 1 from chatferry.accepted_rejects a
                 where a.job_id = ${col('job_id')} and a.entity = ${col('entity')} and a.target_key = ${col('target_key')}
                   and a.code is not distinct from ${col('last_error_code')}) then 'accepted'
    when ${col('target_key')} = '~legacy:' || ${col('legacy_id')}
         and exists (select 1 from chatferry.items l
                     where l.job_id = ${col('job_id')} and l.entity = ${col('entity')} and l.legacy_id = ${col('legacy_id')}
                       and l.status = 'done') then 'superseded'
    else 'open' end`
}
