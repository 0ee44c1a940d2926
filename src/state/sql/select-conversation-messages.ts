import { type Kysely, sql } from 'kysely'

import { conversationOfPayload } from '../conversation-sql.ts'
import { payloadJsonb } from '../safe-text.ts'
import type { StateDatabase } from '../schema.ts'

/** A message item of one conversation, with the payload it was (or will be) sent with. */
export interface ConversationMessageRow {
  readonly target_key: string
  readonly legacy_id: string
  readonly status: string
  /** The payload's JSON text (null for an item without one). */
  readonly payload: string | null
}

/**
 * Reads every message item of a job (`chatferry.items`, any status) whose payload belongs to one
 * conversation, with its payload: verify matches a conversation's listed messages with them (by
 * the legacy id in the payload's metadata, else by sender, receiver, sentAt and text) to name the
 * missing and unexpected messages of a conversation whose counts differ.
 */
export async function selectConversationMessages(db: Kysely<StateDatabase>, jobId: string, conversation: string): Promise<ConversationMessageRow[]> {
  const rows = await sql<ConversationMessageRow>`
    select target_key, legacy_id, status, payload from (
      select target_key, legacy_id, status, payload, ${payloadJsonb()} as p from chatferry.items
      where job_id = ${jobId} and entity = 'messages') d
    where (${conversationOfPayload(sql.ref('p'))}) = ${conversation}
    order by target_key`.execute(db)
  return rows.rows
}
