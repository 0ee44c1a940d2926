/**
 * Changes of a loaded group (`GroupImport` payloads): `PUT /groups/{guid}` for name, type,
 * password, icon, owner, metadata and tags, and a report for what it cannot change. Policy:
 * `changes.groups`. See `change-intents.ts`.
 */
import { cannot, changed, isSkipped, present, unchangeable } from './change-fields.ts'
import type { ChangeIntent, ChangePolicies, NowSkipped, Payload } from './change-types.ts'

const UPDATABLE = ['name', 'type', 'password', 'icon', 'owner', 'metadata', 'tags'] as const
/** Cleared with `unset` (`PUT /groups/{guid}`); tags are cleared by sending none; an owner cannot be cleared. */
const UNSETTABLE = ['icon', 'metadata'] as const
const STICKY = ['owner'] as const

const FIXED: Readonly<Record<string, string>> = {
  createdAt: 'the platform keeps the creation time given at import',
}

export function groupChanges(before: Payload | null, after: Payload | NowSkipped, p: ChangePolicies): ChangeIntent[] {
  const policy = p.changes.groups
  if (isSkipped(after)) {
    return before === null
      ? []
      : [cannot('group.unchangeable', `now skipped (${after.skipped}); the platform keeps the group and its history`, policy)]
  }
  if (before === null) {
    return [cannot('group.unchangeable', 'the group was deleted on the platform when its row vanished; a delta cannot create it again', policy)]
  }
  const out: ChangeIntent[] = []
  const fields = changed(before, after, UPDATABLE)
  const cleared = STICKY.filter((f) => before[f] !== undefined && after[f] === undefined)
  const sent = fields.filter((f) => !(cleared as readonly string[]).includes(f))
  if (sent.length > 0) {
    const unset = UNSETTABLE.filter((f) => before[f] !== undefined && after[f] === undefined)
    const body = {
      ...present(after, ['name', 'type', 'icon', 'owner', 'metadata', 'tags']),
      ...(before.tags !== undefined && after.tags === undefined ? { tags: [] } : {}),
      // A password group needs its password with every update that names its type.
      ...(after.type === 'password' ? { password: after.password } : {}),
      ...(unset.length > 0 ? { unset } : {}),
    }
    out.push({ kind: 'group.update', body, policy, reason: `changed: ${sent.join(', ')}` })
  }
  if (cleared.length > 0) {
    out.push(cannot('group.unchangeable', `${cleared.join(', ')} cleared in the source (a group update cannot clear it)`, policy))
  }
  return [...out, ...unchangeable('group.unchangeable', before, after, FIXED, policy)]
}
