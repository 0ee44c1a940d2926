import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'
import type { ClaimArgs, ClaimedUnit, UnitKind } from '../unit-kind.ts'

/**
 * Claims up to `limit` units of `kind` for `owner`, oldest (lowest id) first, in one statement: a
 * unit in one of the kind's open statuses with no live lease (none, or expired), meeting
 * `eligible`; rows another transaction is claiming are skipped (`for update of c skip locked`). The
 * claim writes the holder, a lease of `leaseSeconds` and (fenced by token) a fresh `lease_token`,
 * which fences out the previous holder. Returns the units with their fence (token or owner) and
 * the `returning` columns, ascending by id. See `../lease-units.ts`.
 */
export async function claimUnits<R>(db: Kysely<StateDatabase>, kind: UnitKind, args: ClaimArgs): Promise<ClaimedUnit<R>[]> {
  const table = sql.id('chatferry', kind.table)
  const token = kind.fence === 'token' ? sql`, lease_token = gen_random_uuid()` : sql``
  const claims = kind.countsClaims ? sql`, claims = claims + 1` : sql``
  const fence = kind.fence === 'token' ? sql`u.lease_token::text` : sql`u.lease_owner`
  const r = await sql<Record<string, unknown> & { id: number | string; fence: string }>`
    update ${table} u
    set lease_owner = ${args.owner}, lease_expires_at = now() + ${args.leaseSeconds} * interval '1 second'${token}${claims}
    from (
      select c.id from ${table} c
      where c.job_id = ${args.jobId} and c.status = any(${kind.open}::text[])
        and (c.lease_expires_at is null or c.lease_expires_at <= now())
        ${args.eligible === undefined ? sql`` : sql`and (${args.eligible})`}
      order by c.id
      limit ${args.limit}
      for update of c skip locked
    ) s
    where u.id = s.id
    returning u.id, ${fence} as fence${args.returning === undefined ? sql`` : sql`, ${args.returning}`}`.execute(db)
  return r.rows.map((row) => ({ ...(row as R), id: Number(row.id), fence: row.fence })).sort((a, b) => a.id - b.id)
}
