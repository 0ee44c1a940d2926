/**
 * Talk attendees of group rooms with actor type `users` → `LegacyMember`: participant type
 * 1 (owner) → admin, 2 (moderator) → moderator, 3 (user) and 5 (user who joined through the public
 * link) → participant. Talk keeps no join time and no bans.
 */
import type { LegacyMember, LegacyMemberScope } from '../../../src/model/records.ts'
import { decodeCount, decodeId, FieldProblem } from '../../sql/decode.ts'

const SCOPES: Readonly<Record<number, LegacyMemberScope>> = { 1: 'admin', 2: 'moderator', 3: 'participant', 5: 'participant' }

export function decodeMember(row: Record<string, unknown>, lossy: boolean): LegacyMember {
  const type = decodeCount('participant_type', row.participant_type)
  const scope = type === undefined ? undefined : SCOPES[type]
  if (scope === undefined) {
    throw new FieldProblem('participant_type', `participant type ${String(row.participant_type)} is not a user's (1, 2, 3 or 5)`)
  }
  return {
    groupId: decodeId('room_id', row.room_id, lossy),
    userId: decodeId('actor_id', row.actor_id, lossy),
    scope,
    banned: false,
  }
}
