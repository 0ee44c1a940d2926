/**
 * A Sendbird user (the `users` export's record, the Platform API's user resource) → LegacyUser.
 * `access_token` and `session_tokens` are credentials: never read. Notes `userMetadata:
 * in-metadata` when the user's own `metadata` is kept under `metadata.sendbird`.
 */
import type { EpochMs, LegacyUser } from '../../../src/model/records.ts'
import type { OutcomeList } from '../../rows/outcomes.ts'
import { bool, defined, FieldProblem, id, isObject, str, time } from '../fields.ts'

export function sendbirdUser(o: unknown, out?: OutcomeList): LegacyUser {
  if (!isObject(o)) {
    throw new FieldProblem('user', 'the user is not an object')
  }
  const userId = id('user_id', o.user_id)
  const createdAt = time('created_at', o.created_at)
  const lastSeen = time('last_seen_at', o.last_seen_at)
  const active = o.is_active === undefined || o.is_active === '' ? true : bool(o.is_active)
  const metadata = defined({
    sendbird: isObject(o.metadata) && Object.keys(o.metadata).length > 0 ? o.metadata : undefined,
    phoneNumber: str(o.phone_number),
    preferredLanguages: Array.isArray(o.preferred_languages) && o.preferred_languages.length > 0 ? o.preferred_languages : undefined,
    hasEverLoggedIn: o.has_ever_logged_in === undefined ? undefined : bool(o.has_ever_logged_in),
  })
  if (metadata.sendbird !== undefined) {
    out?.add('userMetadata', 'in-metadata')
  }
  const deactivatedAt: EpochMs | undefined = active ? undefined : (lastSeen ?? createdAt ?? 0)
  return defined({
    id: userId,
    name: str(o.nickname)?.trim() || userId,
    username: userId,
    avatar: str(o.profile_url),
    metadata: Object.keys(metadata).length > 0 ? metadata : undefined,
    createdAt,
    lastActiveAt: lastSeen,
    deactivatedAt,
    isBot: false,
  })
}
