/**
 * Verify, message by message: the conversations whose counts or legacy-id digests differ (the
 * first {@link MAX_DRILLED_CONVERSATIONS}, counts first; see `count-messages.ts`) are listed again, and each of their messages is matched with
 * the ledger's items of that conversation (by legacy id, else by fingerprint: `src/target/message-match.ts`)
 * to name every missing, unexpected or duplicate one.
 */
import type { ConversationMessageRow } from '../state/index.ts'
import { legacyIdOf, legacyKeyOf, MessageIndex, type MessageShape } from '../target/message-match.ts'
import type { ChatMessage } from '../target/schemas.ts'
import type { DrillOutcome } from './count-messages.ts'
import { MAX_DRILLED_CONVERSATIONS } from './drill-limit.ts'
import { duplicateMessageNote, unknownItemNote } from './foreign-items.ts'
import { messageList } from './message-list.ts'
import { missingItem, presentNote } from './replan-missing.ts'
import type { Mismatch } from './schema.ts'
import type { VerifyRun } from './verify-run.ts'

export { MAX_DRILLED_CONVERSATIONS } from './drill-limit.ts'

/** What the drill found: the target keys it named missing, and per conversation what it named. */
export interface Drilled {
  readonly missing: Set<string>
  readonly conversations: Map<string, DrillOutcome>
}

/** Names the messages of the conversations to list again (the first {@link MAX_DRILLED_CONVERSATIONS}). */
export async function drillConversations(run: VerifyRun, mismatched: readonly string[]): Promise<Drilled> {
  const drilled: Drilled = { missing: new Set(), conversations: new Map() }
  for (const c of mismatched.slice(0, MAX_DRILLED_CONVERSATIONS)) {
    let named = 0
    let unexplained = 0
    const add = (m: Mismatch) => {
      named++
      unexplained += m.explained ? 0 : 1
      run.add(m)
    }
    await drillConversation(run, c, drilled.missing, add)
    drilled.conversations.set(c, { named, unexplained })
  }
  return drilled
}

async function drillConversation(run: VerifyRun, conversation: string, missing: Set<string>, add: (m: Mismatch) => void): Promise<void> {
  const { entities } = run
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
        note: duplicateMessageNote(String(m.id), legacyId !== null ? 'legacy id' : 'sender, receiver, sentAt and text'),
      })
      continue
    }
    entities.messages.unexpected++
    const why =
      item !== undefined
        ? presentNote(run, 'messages', item.target_key, item)
        : {
            explained: false,
            note: unknownItemNote(
              'messages',
              legacyId !== null
                ? ` (it carries legacy id ${legacyId}, which this job has not sent to this conversation)`
                : ' (no legacy id, no message with its sender, receiver, sentAt and text)',
            ),
          }
    add({
      entity: 'messages',
      kind: 'unexpected',
      targetKey: item?.target_key ?? null,
      legacyId,
      field: null,
      expected: null,
      actual: `message ${m.id}`,
      ...why,
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
      ...missingItem(run, 'messages', item.target_key),
    })
  }
}
