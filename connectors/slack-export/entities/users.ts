/**
 * `users.json` (`org_users.json` in an Enterprise Grid export): one object per member, bot users,
 * apps and deactivated members included.
 */
import type { JsonObject, LegacyUser } from '../../../src/model/records.ts'
import { FieldProblem, isObject, secondsMs, slackId, str } from './fields.ts'
import { withoutSecrets } from './url-secrets.ts'

/** Slackbot's fixed id: a bot, though Slack does not flag it `is_bot`. */
export const SLACKBOT_ID = 'USLACKBOT'

function rolesOf(u: JsonObject): string[] {
  const roles: string[] = []
  for (const [flag, role] of [
    ['is_primary_owner', 'primary_owner'],
    ['is_owner', 'owner'],
    ['is_admin', 'admin'],
    ['is_restricted', 'guest'],
    ['is_ultra_restricted', 'single_channel_guest'],
  ] as const) {
    if (u[flag] === true) {
      roles.push(role)
    }
  }
  return roles
}

export function decodeUser(u: unknown, exportTime: number): LegacyUser {
  if (!isObject(u)) {
    throw new FieldProblem('user', 'the entry is not a JSON object')
  }
  const id = slackId('id', u.id)
  const profile = isObject(u.profile) ? u.profile : {}
  const name = str(profile.real_name) ?? str(u.real_name) ?? str(profile.display_name) ?? str(u.name)
  if (name === undefined) {
    throw new FieldProblem('name', 'the user has no real_name, display_name or name')
  }
  const updatedAt = secondsMs('updated', u.updated)
  const roles = rolesOf(u)
  const metadata: JsonObject = {}
  const add = (key: string, v: unknown) => {
    if (v !== undefined && v !== '' && v !== false) {
      metadata[key] = v
    }
  }
  add('displayName', str(profile.display_name))
  add('title', str(profile.title))
  add('timezone', str(u.tz))
  add('teamId', str(u.team_id))
  add('roles', roles.length > 0 ? roles : undefined)
  add('appUser', u.is_app_user === true)
  add('botId', str(profile.bot_id))
  const user: { -readonly [K in keyof LegacyUser]: LegacyUser[K] } = {
    id,
    name,
    isBot: u.is_bot === true || id === SLACKBOT_ID,
  }
  const username = str(u.name)
  if (username !== undefined) {
    user.username = username
  }
  const email = str(profile.email)
  if (email !== undefined) {
    user.email = email
  }
  const avatar = str(profile.image_512) ?? str(profile.image_192) ?? str(profile.image_72)
  if (avatar !== undefined) {
    user.avatar = withoutSecrets(avatar)
  }
  if (Object.keys(metadata).length > 0) {
    user.metadata = metadata
  }
  if (u.deleted === true) {
    // The export has no deactivation time: the last change of the profile, else the export's own time.
    user.deactivatedAt = updatedAt ?? exportTime
  }
  if (updatedAt !== undefined) {
    user.updatedAt = updatedAt
  }
  return user
}
