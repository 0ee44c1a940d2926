/**
 * A Stream Chat channel member → LegacyMember. The channel's creator (`role: owner`, or the
 * `channel_owner` channel role) is its admin; `channel_moderator`, `role: moderator` and the
 * import format's `is_moderator` are moderators; everyone else participates.
 */
import type { JsonObject, LegacyMember, LegacyMemberScope } from '../../../src/model/records.ts'
import { isObject, streamId, timeMs } from './fields.ts'

/** The member's user id: `user_id`, or the embedded `user.id`. */
export function memberUserId(o: JsonObject): string {
  return o.user_id !== undefined || !isObject(o.user) ? streamId('user_id', o.user_id) : streamId('user.id', o.user.id)
}

function scopeOf(o: JsonObject): LegacyMemberScope {
  if (o.role === 'owner' || o.channel_role === 'channel_owner') {
    return 'admin'
  }
  if (o.role === 'moderator' || o.channel_role === 'channel_moderator' || o.is_moderator === true) {
    return 'moderator'
  }
  return 'participant'
}

export function decodeMember(groupId: string, o: JsonObject): LegacyMember {
  const userId = memberUserId(o)
  const joinedAt = timeMs('created_at', o.created_at)
  const updatedAt = timeMs('updated_at', o.updated_at)
  return {
    groupId,
    userId,
    scope: scopeOf(o),
    banned: o.banned === true,
    ...(joinedAt !== undefined ? { joinedAt } : {}),
    ...(updatedAt !== undefined ? { updatedAt } : {}),
  }
}
