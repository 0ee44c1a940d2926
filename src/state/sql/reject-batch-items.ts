import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/** Rejects for good the items still `sent` in a batch (a poison item that failed alone), with the code and message. */
export async function rejectBatchItems(db: Kysely<StateDatabase>, batchId: number, code: string, message: string): Promise<void> {
  await sql`
    update chatferry.items set status = 'rejected', last_error_code = ${code}, last_error_message = ${message},
      attempts = attempts + 1, updated_at = now()
    where batch_id = ${batchId} and status = 'sent'`.execute(db)
}
