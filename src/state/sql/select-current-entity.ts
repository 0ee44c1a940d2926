import { type Kysely, sql } from 'kysely'

import { ENTITIES, type Entity } from '../../target/schemas.ts'
import type { StateDatabase } from '../schema.ts'

/**
 * The first entity, in load order (users → groups → members → messages), that still has items
 * planned or in flight; undefined when the job is drained. An entity starts only when the previous
 * one is finished, because its items refer to the previous one's (members need groups and users).
 */
export async function selectCurrentEntity(db: Kysely<StateDatabase>, jobId: string): Promise<Entity | undefined> {
  for (const entity of ENTITIES) {
    const r = await sql<{ x: number }>`
      select 1 as x from chatferry.items where job_id = ${jobId} and entity = ${entity} and status in ('planned', 'sent') limit 1`.execute(db)
    if (r.rows.length > 0) {
      return entity
    }
  }
  return undefined
}
