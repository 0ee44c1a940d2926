/**
 * Verify, message by message: the conversations whose counts differ (the first
 * {@link MAX_DRILLED_CONVERSATIONS}) are listed again, and each of their messages is matched with
 * the ledger's items of that conversation to name every missing, unexpected or duplicate one.
 */
import { messageList } from './message-list.ts'
import type { VerifyRun } from './verify-run.ts'

/** Conversations with a different count that are listed again to name their messages. */
export const MAX_DRILLED_CONVERSATIONS = 200

/** Names the messages of conversations whose counts differ (needs a message list that carries `muid`). */
export async function drillConversations(run: VerifyRun, mismatched: readonly string[]): Promise<void> {
  for (const c of mismatched.slice(0, MAX_DRILLED_CONVERSATIONS)) await drillConversation(run, c)
}

async function drillConversation(run: VerifyRun, conversation: string): Promise<void> {
  const { entities, add } = run
  const ledgerRows = await run.lookups.conversationMessages(run.jobId, conversation)
  const inLedger = new Map(ledgerRows.map((r) => [r.target_key, r]))
  const there = new Set<string>()
  for await (const m of messageList(run.pacer, run.client, { conversationId: conversation }, run.signal)) {
    if (m.muid === undefined) continue
    if (there.has(m.muid)) {
      entities.messages.duplicates++
      add({ entity: 'messages', kind: 'duplicate', targetKey: m.muid, legacyId: inLedger.get(m.muid)?.legacy_id ?? null, field: null, expected: 1, actual: 2, explained: false, note: 'listed twice by the platform' })
      continue
    }
    there.add(m.muid)
    const item = inLedger.get(m.muid)
    if (item?.status === 'done') continue
    entities.messages.unexpected++
    const explained = item?.status === 'planned' || item?.status === 'sent'
    add({
      entity: 'messages',
      kind: 'unexpected',
      targetKey: m.muid,
      legacyId: item?.legacy_id ?? null,
      field: null,
      expected: null,
      actual: m.muid,
      explained,
      note: item === undefined ? 'on the platform, unknown to the ledger' : explained ? `the ledger has it ${item.status}: the load has not finished` : `on the platform, but ${item.status} in the ledger`,
    })
  }
  for (const [key, item] of inLedger) {
    if (item.status !== 'done' || there.has(key)) continue
    entities.messages.missing++
    add({ entity: 'messages', kind: 'missing', targetKey: key, legacyId: item.legacy_id, field: null, expected: key, actual: null, explained: false, note: 'done in the ledger, absent on the platform' })
  }
}
