/**
 * The conversation a stored message payload belongs to, as the platform names it: `group_<guid>`,
 * or the two uids sorted (byte order, `collate "C"`) and joined by `_user_`. Shared by the SQL
 * of `verify-lookups.ts`, which counts and lists messages per conversation.
 */
import { type RawBuilder, sql } from 'kysely'

/** SQL text of a payload's conversation; `p` is a `jsonb` payload expression. */
export function conversationOfPayload(p: RawBuilder<unknown>): RawBuilder<string> {
  return sql<string>`case when ${p}->>'receiverType' = 'group' then 'group_' || (${p}->>'receiver')
      else least(${p}->>'sender' collate "C", ${p}->>'receiver' collate "C") || '_user_' || greatest(${p}->>'sender' collate "C", ${p}->>'receiver' collate "C") end`
}
