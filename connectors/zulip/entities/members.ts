/**
 * Zulip subscriptions → `LegacyMember`: active stream subscriptions (an unsubscribed user's row is
 * kept by Zulip with `active = false`: not a member), every subscriber of a direct-message group of
 * three or more, and, with `group-per-topic`, each stream subscriber in each of the stream's topics.
 * The stream's creator is `admin` (Zulip's default channel administrator), everyone else
 * `participant`; Zulip has no bans. `joinedAt` is the latest SUBSCRIPTION_CREATED/ACTIVATED audit
 * event; a direct-message group's members joined with its first message.
 */
import type { LegacyMember } from '../../../src/model/records.ts'
import { compact, decodeId, decodeTimestamp } from '../../sql/decode.ts'
import { groupIdOf } from './groups.ts'

export function decodeMember(row: Record<string, unknown>): LegacyMember {
  const userId = decodeId('user_profile_id', row.uid)
  const creator = row.creator_id === null || row.creator_id === undefined ? undefined : String(row.creator_id)
  return compact<LegacyMember>({
    groupId: groupIdOf(row.kind, decodeId('recipient_id', row.gid), row.topic_key),
    userId,
    scope: creator === userId ? 'admin' : 'participant',
    banned: false,
    joinedAt: decodeTimestamp('realmauditlog.event_time', row.joined_at),
    updatedAt: decodeTimestamp('changed_at', row.changed_at),
  })
}

/** A member row's legacy id, `<groupId>/<userId>`, even when the row cannot be decoded. */
export function memberIdOf(row: Record<string, unknown>): string {
  return `${groupIdOf(row.kind, row.gid, row.topic_key)}/${String(row.uid ?? '?')}`
}
