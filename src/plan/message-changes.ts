/**
 * Changes of a loaded message (`MessageImport` payloads): an edit (`PUT /messages/{id}` with the
 * new `data.text` and `data.metadata`, on behalf of the sender; policy `changes.edits`), a deletion in the source (policy
 * `changes.deletions`: under `deletes.mode: skip` a `message.delete`, under `tombstone` an edit to
 * the tombstone the bulk load would have sent), and a report for what a message update cannot
 * change (sender, receiver, sentAt, receipts, type, attachments, custom data). See `change-intents.ts`.
 */
import { cannot, changed, differs, isSkipped, skipPolicy, unchangeable } from './change-fields.ts'
import type { ChangeIntent, ChangePolicies, NowSkipped, Payload } from './change-types.ts'

/** What a message update takes inside `data` (`PUT /messages/{id}`; attachments and custom data it does not). */
const EDITABLE_DATA = ['text', 'metadata'] as const

/** The skip policy of a loaded part of a split message that its message no longer has (`orphaned-parts.ts`). */
export const ORPHANED_PART_POLICY = 'longText'

const FIXED: Readonly<Record<string, string>> = {
  sender: 'a message keeps its sender',
  receiver: 'a message keeps its conversation',
  receiverType: 'a message keeps its conversation',
  sentAt: 'a message keeps its sent time',
  deliveredAt: 'receipts are not updatable',
  readAt: 'receipts are not updatable',
  category: 'a message keeps its category',
  type: 'a message keeps its type',
}

export function messageChanges(before: Payload | null, after: Payload | NowSkipped, p: ChangePolicies): ChangeIntent[] {
  const { edits, deletions } = p.changes
  if (isSkipped(after)) {
    if (before === null) {
      return []
    }
    if (skipPolicy(after.skipped) === 'deletes') {
      return [{ kind: 'message.delete', body: { sender: before.sender }, policy: deletions, reason: 'deleted in the source (deletes.mode: skip)' }]
    }
    if (skipPolicy(after.skipped) === ORPHANED_PART_POLICY) {
      // A later part of a split message its text no longer needs (`longText: truncate`, a shorter
      // edit): removed, under the policy of the edit that shortened its first part.
      return [{ kind: 'message.delete', body: { sender: before.sender }, policy: edits, reason: after.skipped.replace(/^policy:[^:]+: /, '') }]
    }
    return [cannot('message.unchangeable', `now skipped (${after.skipped}); the platform keeps the message as loaded`, edits)]
  }
  if (before === null) {
    return [cannot('message.unchangeable', 'the message was deleted on the platform; a deleted message cannot be restored', edits)]
  }
  if (tombstoned(after, p.metadataKey) && !tombstoned(before, p.metadataKey)) {
    const edit: ChangeIntent = {
      kind: 'message.edit',
      body: editBody(before, after, false),
      policy: deletions,
      reason: 'deleted in the source (deletes.mode: tombstone)',
    }
    return [edit, ...stuck(before, after, deletions)]
  }
  const out: ChangeIntent[] = []
  const a = (before.data ?? {}) as Payload
  const b = (after.data ?? {}) as Payload
  const fields = [...changed(a, b, EDITABLE_DATA).map((f) => `data.${f}`), ...(differs(before, after, 'tags') ? ['tags'] : [])]
  if (fields.length > 0) {
    out.push({
      kind: 'message.edit',
      body: editBody(before, after, differs(before, after, 'tags')),
      policy: edits,
      reason: `changed: ${fields.join(', ')}`,
    })
  }
  return [...out, ...stuck(before, after, edits), ...unchangeable('message.unchangeable', before, after, FIXED, edits)]
}

/** What `PUT /messages/{id}` takes: `data.text`, `data.metadata` and `tags`, on behalf of `sender` (the lane's `onBehalfOf`). */
function editBody(before: Payload, after: Payload, tags: boolean): Record<string, unknown> {
  const d = (after.data ?? {}) as Payload
  const data: Record<string, unknown> = {}
  for (const f of EDITABLE_DATA) {
    if (d[f] !== undefined) {
      data[f] = d[f]
    }
  }
  return { sender: before.sender, data, ...(tags ? { tags: after.tags ?? [] } : {}) }
}

/** Changes inside `data` a message update cannot make (attachments, custom data, other keys): reported. */
function stuck(before: Payload, after: Payload, policy: ChangeIntent['policy']): ChangeIntent[] {
  const a = (before.data ?? {}) as Payload
  const b = (after.data ?? {}) as Payload
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((k) => !(EDITABLE_DATA as readonly string[]).includes(k))
  const fields = changed(a, b, keys)
  if (fields.length === 0) {
    return []
  }
  return [
    cannot(
      'message.unchangeable',
      `${fields.map((f) => `data.${f}`).join(', ')} (a message update takes only data.text, data.metadata and tags)`,
      policy,
    ),
  ]
}

/** True when the payload is the tombstone of a deleted message (`deletedAt` in chatferry's metadata). */
function tombstoned(p: Payload, key: string): boolean {
  const own = ((p.data as Payload | undefined)?.metadata as Payload | undefined)?.[key] as Payload | undefined
  return own?.deletedAt !== undefined
}
