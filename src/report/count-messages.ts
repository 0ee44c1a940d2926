/**
 * Verify, messages per conversation: one pass over the platform's whole message list counts the
 * messages of each conversation (and compares the sampled ones field by field on the way), then
 * each conversation's count is compared with the ledger's done messages. The conversations to list
 * again (`drill-conversations.ts`) are those whose count differs, and those whose digest of legacy
 * ids differs with the same count (one message swapped for another).
 */
import type { MatchedBy } from '../target/message-match.ts'
import { legacyDigestOf, legacyKeyOf } from '../target/message-match.ts'
import { MAX_DRILLED_CONVERSATIONS } from './drill-limit.ts'
import { conversationOf, messageList } from './message-list.ts'
import { compareSampledMessage, loadMessageSample, type MessageSample } from './message-sample.ts'
import type { VerifyRun } from './verify-run.ts'

export interface MessageCounts {
  /** Conversations in the ledger or on the platform. */
  readonly conversations: number
  /** Conversations whose counts differ, in the order found. */
  readonly mismatched: string[]
  /** Conversations to list again: those whose counts differ, then those with the same count whose legacy ids differ. */
  readonly toRelist: string[]
  /** Sampled messages compared field by field. */
  readonly compared: number
  /** The compared ones by how they were matched with the ledger. */
  readonly comparedBy: Record<MatchedBy, number>
  /** Listed messages that carry chatferry's legacy id (`legacyId`) and those that do not (`fingerprint`). */
  readonly listedBy: Record<MatchedBy, number>
  /** The sample, to name its items no listed message matched. */
  readonly sample: MessageSample
  /** The conversations whose counts differ, with both counts: reported after the drill ({@link reportCountDifferences}). */
  readonly countDiffs: readonly CountDiff[]
}

/** One conversation's done messages in the ledger against its messages on the platform. */
export interface CountDiff {
  readonly conversation: string
  readonly want: number
  readonly got: number
}

/** What the drill found in one conversation: the messages it named, and how many of them are unexplained. */
export interface DrillOutcome {
  readonly named: number
  readonly unexplained: number
}

export async function countMessages(run: VerifyRun, sampleSize: number): Promise<MessageCounts> {
  const { entities } = run
  const expectedByConversation = new Map<string, number>()
  const expectedDigest = new Map<string, bigint>()
  for (const r of await run.lookups.doneMessagesPerConversation(run.jobId, run.legacyMetadataKey)) {
    expectedByConversation.set(r.conversation, r.n)
    expectedDigest.set(r.conversation, BigInt(r.legacy_digest))
    entities.messages.ledgerDone += r.n
  }
  const sample = await loadMessageSample(run, sampleSize)
  const onPlatform = new Map<string, number>()
  const platformDigest = new Map<string, bigint>()
  const comparedBy: Record<MatchedBy, number> = { legacyId: 0, fingerprint: 0 }
  const listedBy: Record<MatchedBy, number> = { legacyId: 0, fingerprint: 0 }
  let listed = 0
  for await (const m of messageList(run.pacer, run.client, {}, run.signal)) {
    listed++
    const c = m.conversationId ?? conversationOf(m.sender, m.receiverType, m.receiver)
    onPlatform.set(c, (onPlatform.get(c) ?? 0) + 1)
    platformDigest.set(c, (platformDigest.get(c) ?? 0n) + legacyDigestOf(m, run.legacyMetadataKey))
    listedBy[legacyKeyOf(m, run.legacyMetadataKey) === undefined ? 'fingerprint' : 'legacyId']++
    const by = compareSampledMessage(run, sample, m)
    if (by !== undefined) {
      comparedBy[by]++
    }
  }
  entities.messages.platform = listed
  const conversations = new Set([...expectedByConversation.keys(), ...onPlatform.keys()])
  const mismatched: string[] = []
  const countDiffs: CountDiff[] = []
  const swapped: string[] = []
  for (const c of conversations) {
    const want = expectedByConversation.get(c) ?? 0
    const got = onPlatform.get(c) ?? 0
    if (want === got) {
      if ((expectedDigest.get(c) ?? 0n) !== (platformDigest.get(c) ?? 0n)) {
        swapped.push(c)
      }
      continue
    }
    mismatched.push(c)
    countDiffs.push({ conversation: c, want, got })
  }
  return {
    conversations: conversations.size,
    mismatched,
    toRelist: [...mismatched, ...swapped],
    compared: comparedBy.legacyId + comparedBy.fingerprint,
    comparedBy,
    listedBy,
    sample,
    countDiffs,
  }
}

/**
 * Each conversation whose count differs, once the drill has named its messages: explained when
 * every message the drill named there is (planned again, not loaded yet); otherwise the named
 * messages carry the advice, and a conversation beyond the drill's limit says how to reach it.
 */
export function reportCountDifferences(run: VerifyRun, diffs: readonly CountDiff[], drilled: ReadonlyMap<string, DrillOutcome>): void {
  for (const { conversation: c, want, got } of diffs) {
    const outcome = drilled.get(c)
    const explained = outcome !== undefined && outcome.named > 0 && outcome.unexplained === 0
    const why =
      outcome === undefined
        ? `not listed message by message (only the first ${MAX_DRILLED_CONVERSATIONS} conversations are): fix the ones listed, then run verify again to reach it`
        : explained
          ? 'every message named in it is explained'
          : 'the messages named in it say what fixes each'
    run.add({
      entity: 'messages',
      kind: 'count',
      targetKey: c,
      legacyId: null,
      field: 'messages',
      expected: want,
      actual: got,
      explained,
      note: `conversation ${c}: ${want} done in the ledger, ${got} on the platform; ${why}`,
    })
  }
}
