import { type Kysely, sql } from 'kysely'

import type { Entity } from '../../target/schemas.ts'
import type { StateDatabase } from '../schema.ts'
import { type RejectStanding, rejectStanding } from './reject-standing.ts'

/** Which rejected items an operator's selection names: all of these that are given. */
export interface RejectSelection {
  readonly entity?: Entity
  readonly code?: string
  /** Legacy ids or target keys, each optionally of one entity. */
  readonly ids?: readonly { readonly entity?: Entity; readonly id: string }[]
}

export interface RejectMatchRow {
  entity: Entity
  legacy_id: string
  target_key: string
  code: string | null
  message: string | null
  standing: RejectStanding
  /** The selection's id this row matched (null without `ids`). */
  matched_id: string | null
}

/**
 * The rejected items of a job that a selection names, each with its standing (open, accepted,
 * superseded) and, for an id list, the id it matched (a legacy id or a target key), so the caller
 * can name the ids that match no rejected item.
 */
export async function selectRejectMatches(db: Kysely<StateDatabase>, jobId: string, sel: RejectSelection): Promise<RejectMatchRow[]> {
  const ids = sel.ids ?? []
  const r = await sql<RejectMatchRow>`
    select i.entity, i.legacy_id, i.target_key, i.last_error_code as code, i.last_error_message as message,
           ${rejectStanding('i')} as standing, ${sel.ids === undefined ? sql`null::text` : sql`t.id`} as matched_id
    from chatferry.items i
    ${
      sel.ids === undefined
        ? sql``
        : sql`join unnest(${ids.map((x) => x.entity ?? null)}::text[], ${ids.map((x) => x.id)}::text[]) as t(entity, id)
                on (i.legacy_id = t.id or i.target_key = t.id) and (t.entity is null or i.entity = t.entity)`
    }
    where i.job_id = ${jobId} and i.status = 'rejected'
      ${sel.entity === undefined ? sql`` : sql`and i.entity = ${sel.entity}`}
      ${sel.code === undefined ? sql`` : sql`and i.last_error_code = ${sel.code}`}
    order by i.id`.execute(db)
  return r.rows
}
