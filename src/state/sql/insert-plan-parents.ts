import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/** A message as a later reply looks it up: mapped (muid, text, sender name) or skipped by a policy. */
export interface PlanParentRow {
  readonly legacyId: string
  readonly muid: string | null
  readonly text: string | null
  readonly senderName: string | null
  /** The policy that skipped the message; null when it was mapped. */
  readonly skippedPolicy: string | null
}

/**
 * Writes a page's messages into the dry run's temporary table of thread parents (one statement);
 * a legacy id already there keeps its first row, as the ledger keeps the first item.
 */
export async function insertPlanParents(db: Kysely<StateDatabase>, rows: readonly PlanParentRow[]): Promise<void> {
  if (rows.length === 0) {
    return
  }
  const ids = rows.map((r) => r.legacyId)
  const muids = rows.map((r) => r.muid)
  const texts = rows.map((r) => r.text)
  const senders = rows.map((r) => r.senderName)
  const skipped = rows.map((r) => r.skippedPolicy)
  await sql`insert into chatferry_plan_parents (legacy_id, muid, text, sender_name, skipped_policy)
    select * from unnest(${ids}::text[], ${muids}::text[], ${texts}::text[], ${senders}::text[], ${skipped}::text[])
    on conflict (legacy_id) do nothing`.execute(db)
}
