/**
 * A Stream Chat user object (embedded in members, messages and `created_by`, or a v2 `user` line)
 * → LegacyUser. Stream's own role is kept in metadata (the platform's roles are not Stream's).
 * Notes `customFields: in-metadata | dropped` for a user with custom fields.
 */
import type { JsonObject, LegacyUser } from '../../../src/model/records.ts'
import type { OutcomeList } from '../../rows/outcomes.ts'
import { customFields, noteCustom, str, streamId, timeMs } from './fields.ts'

const KNOWN = new Set([
  'id',
  'name',
  'image',
  'role',
  'created_at',
  'updated_at',
  'last_active',
  'last_engaged_at',
  'deactivated_at',
  'deleted_at',
  'banned',
  'shadow_banned',
  'online',
  'invisible',
  'language',
  'teams',
  'teams_role',
  'revoke_tokens_issued_before',
  'privacy_settings',
  'push_notifications',
  'blocked_user_ids',
  'avg_response_time',
  'ban_expires',
])

export function decodeUser(o: JsonObject, keepCustom: boolean, out?: OutcomeList): LegacyUser {
  const id = streamId('id', o.id)
  const deactivatedAt = timeMs('deactivated_at', o.deactivated_at) ?? timeMs('deleted_at', o.deleted_at)
  const createdAt = timeMs('created_at', o.created_at)
  const lastActiveAt = timeMs('last_active', o.last_active)
  const updatedAt = timeMs('updated_at', o.updated_at)
  const custom = keepCustom || out !== undefined ? customFields(o, KNOWN) : undefined
  noteCustom(out, custom, keepCustom)
  const metadata: JsonObject = {
    ...(str(o.role) !== undefined ? { streamRole: o.role } : {}),
    ...(o.banned === true ? { banned: true } : {}),
    ...(Array.isArray(o.teams) && o.teams.length > 0 ? { teams: o.teams } : {}),
    ...(str(o.language) !== undefined ? { language: o.language } : {}),
    ...(custom !== undefined && keepCustom ? { custom } : {}),
  }
  return {
    id,
    name: str(o.name) ?? id,
    ...(str(o.image) !== undefined ? { avatar: o.image as string } : {}),
    ...(Object.keys(metadata).length > 0 ? { metadata } : {}),
    ...(createdAt !== undefined ? { createdAt } : {}),
    ...(lastActiveAt !== undefined ? { lastActiveAt } : {}),
    ...(deactivatedAt !== undefined ? { deactivatedAt } : {}),
    isBot: false,
    ...(updatedAt !== undefined ? { updatedAt } : {}),
  }
}
