/**
 * Changes of a loaded user (`UserImport` payloads): `PUT /users/{uid}` for the profile fields it
 * takes, deactivation and reactivation, and a report for what it cannot change. Policy:
 * `changes.users`. See `change-intents.ts`.
 */
import { cannot, changed, isSkipped, present, skipPolicy, unchangeable } from './change-fields.ts'
import type { ChangeIntent, ChangePolicies, NowSkipped, Payload } from './change-types.ts'

/** What `PUT /users/{uid}` takes; `unset` clears avatar, link and metadata, tags are cleared by sending none. */
const UPDATABLE = ['name', 'avatar', 'link', 'role', 'metadata', 'tags'] as const
const UNSETTABLE = ['avatar', 'link', 'metadata'] as const

const FIXED: Readonly<Record<string, string>> = {
  createdAt: 'the platform keeps the creation time given at import',
  lastActiveAt: 'the platform keeps its own activity time',
}

export function userChanges(before: Payload | null, after: Payload | NowSkipped, p: ChangePolicies): ChangeIntent[] {
  const policy = p.changes.users
  if (isSkipped(after)) {
    if (before === null) {
      return []
    }
    if (skipPolicy(after.skipped) === 'deactivatedUsers') {
      return [{ kind: 'user.deactivate', body: {}, policy, reason: 'deactivated in the source (deactivatedUsers: skip)' }]
    }
    return [cannot('user.unchangeable', `now skipped (${after.skipped}); the platform keeps the user as loaded`, policy)]
  }
  if (before === null) {
    // Its deactivation was planned when its row vanished; the row is back.
    const back: ChangeIntent[] =
      after.deactivatedAt === undefined ? [{ kind: 'user.reactivate', body: {}, policy, reason: 'back in the source after it vanished' }] : []
    return [...back, { kind: 'user.update', body: updateBody({}, after), policy, reason: 'back in the source after it vanished' }]
  }
  const out: ChangeIntent[] = []
  const wasOff = before.deactivatedAt !== undefined
  const isOff = after.deactivatedAt !== undefined
  if (wasOff && !isOff) {
    out.push({ kind: 'user.reactivate', body: {}, policy, reason: 'reactivated in the source' })
  }
  const roleCleared = before.role !== undefined && after.role === undefined
  const fields = changed(before, after, UPDATABLE).filter((f) => f !== 'role' || !roleCleared)
  if (fields.length > 0) {
    out.push({ kind: 'user.update', body: updateBody(before, after), policy, reason: `changed: ${fields.join(', ')}` })
  }
  if (roleCleared) {
    out.push(cannot('user.unchangeable', 'role cleared in the source (a user update cannot clear a role)', policy))
  }
  if (!wasOff && isOff) {
    out.push({ kind: 'user.deactivate', body: {}, policy, reason: 'deactivated in the source' })
  }
  const fixed = wasOff && isOff ? { ...FIXED, deactivatedAt: 'the platform keeps the deactivation time it recorded' } : FIXED
  return [...out, ...unchangeable('user.unchangeable', before, after, fixed, policy)]
}

/** The desired profile: every field `PUT /users/{uid}` takes, `unset` for those cleared since `before`, no tags as `[]`. */
function updateBody(before: Payload, after: Payload): Record<string, unknown> {
  const unset = UNSETTABLE.filter((f) => before[f] !== undefined && after[f] === undefined)
  const tags = before.tags !== undefined && after.tags === undefined ? { tags: [] } : {}
  return { ...present(after, UPDATABLE), ...tags, ...(unset.length > 0 ? { unset } : {}) }
}
