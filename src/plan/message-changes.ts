/**
 * Changes of a loaded message (`MessageImport` payloads): an edit (`PUT /messages/{id}` with the
 * new `data`, on behalf of the sender; policy `changes.edits`), a deletion in the source (policy
 * `changes.deletions`: under `deletes.mode: skip` a `message.delete`, under `tombstone` an edit to
 * the tombstone the bulk load would have sent), and a report for what a message update cannot
 * change (sender, receiver, sentAt, receipts, type). See `change-intents.ts`.
 */
import { cannot, changed, differs, isSkipped, skipPolicy, unchangeable } from './change-fields.ts'
import type { ChangeIntent, ChangePolicies, NowSkipped, Payload } from './change-intents.ts'

const EDITABLE = ['data', 'tags'] as const

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
    return [cannot('message.unchangeable', `now skipped (${after.skipped}); the platform keeps the message as loaded`, edits)]
  }
  if (before === null) {
    return [cannot('message.unchangeable', 'the message was deleted on the platform; a deleted message cannot be restored', edits)]
  }
  if (tombstoned(after, p.metadataKey) && !tombstoned(before, p.metadataKey)) {
    const body = { sender: before.sender, data: after.data }
    return [{ kind: 'message.edit', body, policy: deletions, reason: 'deleted in the source (deletes.mode: tombstone)' }]
  }
  const out: ChangeIntent[] = []
  const fields = changed(before, after, EDITABLE)
  if (fields.length > 0) {
    const body: Record<string, unknown> = { sender: before.sender, data: after.data ?? {} }
    if (differs(before, after, 'tags')) {
      body.tags = after.tags ?? []
    }
    out.push({ kind: 'message.edit', body, policy: edits, reason: `changed: ${dataFields(before, after).join(', ')}` })
  }
  return [...out, ...unchangeable('message.unchangeable', before, after, FIXED, edits)]
}

/** True when the payload is the tombstone of a deleted message (`deletedAt` in chatferry's metadata). */
function tombstoned(p: Payload, key: string): boolean {
  const own = ((p.data as Payload | undefined)?.metadata as Payload | undefined)?.[key] as Payload | undefined
  return own?.deletedAt !== undefined
}

/** `data.text`, `data.attachments`, `tags`, …: the edited fields, named for the reason. */
function dataFields(before: Payload, after: Payload): string[] {
  const a = (before.data ?? {}) as Payload
  const b = (after.data ?? {}) as Payload
  const inData = changed(a, b, [...new Set([...Object.keys(a), ...Object.keys(b)])]).map((f) => `data.${f}`)
  return [...inData, ...(differs(before, after, 'tags') ? ['tags'] : [])]
}
