/**
 * Verify, message by message: the conversations whose counts or legacy-id digests differ (the
 * first {@link MAX_DRILLED_CONVERSATIONS}, counts first; see `count-messages.ts`) are listed again, and each of their messages is matched with
 * the ledger's items of that conversation (by legacy id, else by fingerprint: `src/target/message-match.ts`)
 * to name every missing, unexpected or duplicate one.
 */
import type { ConversationMessageRow } from '../state/index.ts'
import { legacyIdOf, legacyKeyOf, MessageIndex, type MessageShape } from '../target/message-match.ts'
import type { ChatMessage } from '../target/schemas.ts'
import { messageList } from './message-list.ts'
import type { VerifyRun } from './verify-run.ts'

/** Conversations listed again (different count or legacy-id digest) to name their messages. */
export const MAX_DRILLED_CONVERSATIONS = 200

/** Names the messages of the conversations to list again; returns the target keys it named missing. */
export async function drillConversations(run: VerifyRun, mismatched: readonly string[]): Promise<Set<string>> {
  const missing = new Set<string>()
  for (const c of mismatched.slice(0, MAX_DRILLED_CONVERSATIONS)) {
    await drillConversation(run, c, missing)
  }
  return missing
}

async function drillConversation(run: VerifyRun, conversation: string, missing: Set<string>): Promise<void> {
  const { entities, add } = run
  const index = new MessageIndex<ConversationMessageRow>(run.legacyMetadataKey)
  for (const r of await run.lookups.conversationMessages(run.jobId, conversation)) {
    if (r.payload !== null) {
      index.add(r, JSON.parse(r.payload) as MessageShape)
    }
  }
  const listed: ChatMessage[] = []
  for await (const m of messageList(run.pacer, run.client, { conversationId: conversation }, run.signal)) {
    listed.push(m)
  }
  // Messages that carry a legacy id first, so a copy without one cannot take an original's item.
  const ordered = [
    ...listed.filter((m) => legacyKeyOf(m, run.legacyMetadataKey) !== undefined),
    ...listed.filter((m) => legacyKeyOf(m, run.legacyMetadataKey) === undefined),
  ]
  for (const m of ordered) {
    const hit = index.take(m)
    const item = hit?.item
    if (item?.status === 'done') {
      continue
    }
    const legacyId = item?.legacy_id ?? legacyIdOf(m, run.legacyMetadataKey) ?? null
    const original = item === undefined ? index.takenMatch(m) : undefined
    if (original !== undefined) {
      entities.messages.duplicates++
      add({
        entity: 'messages',
        kind: 'duplicate',
        targetKey: original.target_key,
        legacyId: original.legacy_id,
        field: null,
        expected: 1,
        actual: 2,
        explained: false,
        note: `message ${m.id} is a second copy (same ${legacyId !== null ? 'legacy id' : 'sender, receiver, sentAt and text'})`,
      })
      continue
    }
    entities.messages.unexpected++
    const explained = item?.status === 'planned' || item?.status === 'sent'
    add({
      entity: 'messages',
      kind: 'unexpected',
      targetKey: item?.target_key ?? null,
      legacyId,
      field: null,
      expected: null,
      actual: `message ${m.id}`,
      explained,
      note:
        item !== undefined
          ? explained
            ? `the ledger has it ${item.status}: the load has not finished`
            : `on the platform, but ${item.status} in the ledger`
          : legacyId !== null
            ? `carries legacy id ${legacyId}, which the ledger has not sent to this conversation`
            : 'on the platform, unknown to the ledger (no legacy id, no message with its sender, receiver, sentAt and text)',
    })
  }
  for (const item of index.items()) {
    if (item.status !== 'done' || index.isTaken(item)) {
      continue
    }
    entities.messages.missing++
    missing.add(item.target_key)
    add({
      entity: 'messages',
      kind: 'missing',
      targetKey: item.target_key,
      legacyId: item.legacy_id,
      field: null,
      expected: item.target_key,
      actual: null,
      explained: false,
      note: 'done in the ledger, absent on the platform',
    })
  }
}
