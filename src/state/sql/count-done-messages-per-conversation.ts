import { sql, type Kysely } from 'kysely'
import { conversationOfPayload } from '../conversation-sql.ts'
import { payloadJsonb } from '../safe-text.ts'
import type { StateDatabase } from '../schema.ts'

/**
 * Counts a job's done message items (`chatferry.items`) per conversation of their payload: what
 * the platform should hold in each conversation.
 */
export async function countDoneMessagesPerConversation(db: Kysely<StateDatabase>, jobId: string): Promise<{ conversation: string; n: number }[]> {
  const conv = await sql<{ conversation: string; n: number }>`
    select ${conversationOfPayload(sql.ref('p'))} as conversation,
      count(*)::int as n
    from (select ${payloadJsonb()} as p from chatferry.items where job_id = ${jobId} and entity = 'messages' and status = 'done') d
    group by 1`.execute(db)
  return conv.rows
}
