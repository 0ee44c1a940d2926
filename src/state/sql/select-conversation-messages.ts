import { sql, type Kysely } from 'kysely'
import { conversationOfPayload } from '../conversation-sql.ts'
import { payloadJsonb } from '../safe-text.ts'
import type { StateDatabase } from '../schema.ts'

/**
 * Reads every message item of a job (`chatferry.items`, any status) whose payload belongs to one
 * conversation: verify names the missing and unexpected messages of a conversation whose counts
 * differ with them.
 */
export async function selectConversationMessages(
  db: Kysely<StateDatabase>,
  jobId: string,
  conversation: string,
): Promise<{ target_key: string; legacy_id: string; status: string }[]> {
  const rows = await sql<{ target_key: string; legacy_id: string; status: string }>`
    select target_key, legacy_id, status from (
      select target_key, legacy_id, status, ${payloadJsonb()} as p from chatferry.items
      where job_id = ${jobId} and entity = 'messages') d
    where (${conversationOfPayload(sql.ref('p'))}) = ${conversation}`.execute(db)
  return rows.rows
}
