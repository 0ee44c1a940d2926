import { type Kysely, sql } from 'kysely'

import { conversationOfPayload } from '../conversation-sql.ts'
import { payloadJsonb } from '../safe-text.ts'
import type { StateDatabase } from '../schema.ts'

/** Done messages of one conversation: how many, and a digest of the legacy ids they carry. */
export interface ConversationCountRow {
  readonly conversation: string
  readonly n: number
  /**
   * The sum (decimal text) over the done messages whose payload carries a legacy id in
   * `data.metadata[<key>].id` of the first 48 bits of md5(`<id>` U+001F `<part n, else 1>`); the
   * same sum over the platform's list differs when one message was swapped for another.
   */
  readonly legacy_digest: string
}

/**
 * Counts a job's done message items (`chatferry.items`) per conversation of their payload, with a
 * digest of the legacy ids they carry under `metadataKey`: what the platform should hold in each
 * conversation.
 */
export async function countDoneMessagesPerConversation(
  db: Kysely<StateDatabase>,
  jobId: string,
  metadataKey: string,
): Promise<ConversationCountRow[]> {
  const conv = await sql<ConversationCountRow>`
    select conversation, count(*)::int as n,
      coalesce(sum(('x' || substr(md5(legacy_key), 1, 12))::bit(48)::bigint), 0)::text as legacy_digest
    from (
      select ${conversationOfPayload(sql.ref('p'))} as conversation,
        case when jsonb_typeof(p->'data'->'metadata'->${metadataKey}->'id') in ('string', 'number')
          then (p->'data'->'metadata'->${metadataKey}->>'id') || chr(31)
            || case when jsonb_typeof(p->'data'->'metadata'->${metadataKey}->'part'->'n') = 'number'
                 then p->'data'->'metadata'->${metadataKey}->'part'->>'n' else '1' end
        end as legacy_key
      from (select ${payloadJsonb()} as p from chatferry.items where job_id = ${jobId} and entity = 'messages' and status = 'done') d
    ) e
    group by 1`.execute(db)
  return conv.rows
}
