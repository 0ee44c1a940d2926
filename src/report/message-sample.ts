/**
 * Verify, messages field by field: a deterministic sample of the ledger's done messages, each
 * compared on {@link COMPARED_FIELDS} with the platform's copy when the message list passes it.
 * Listed messages are matched with sampled items by legacy id, else by fingerprint
 * (`src/target/message-match.ts`); sampled items no listed message matched are reported, never skipped.
 */
import { storableText } from '../state/index.ts'
import { type MatchedBy, MessageIndex, type MessageShape } from '../target/message-match.ts'
import type { ChatMessage } from '../target/schemas.ts'
import type { VerifyRun } from './verify-run.ts'

export const COMPARED_FIELDS = ['sender', 'receiver', 'sentAt', 'text'] as const

export interface Sampled {
  readonly targetKey: string
  readonly legacyId: string
  /** The source changed after loading: a difference is explained. */
  readonly changed: boolean
  readonly expected: Record<(typeof COMPARED_FIELDS)[number], unknown>
}

/** The sampled messages, by legacy key and fingerprint. */
export type MessageSample = MessageIndex<Sampled>

/** Up to `size` done messages of the ledger, the same ones for the same ledger. */
export async function loadMessageSample(run: VerifyRun, size: number): Promise<MessageSample> {
  const sample: MessageSample = new MessageIndex(run.legacyMetadataKey)
  if (size <= 0) {
    return sample
  }
  for (const r of await run.lookups.messageSample(run.jobId, size)) {
    const p = JSON.parse(r.payload) as MessageShape & { data?: { text?: string } }
    sample.add(
      {
        targetKey: r.target_key,
        legacyId: r.legacy_id,
        changed: r.changed,
        expected: { sender: p.sender, receiver: p.receiver, sentAt: p.sentAt, text: p.data?.text ?? null },
      },
      p,
    )
  }
  return sample
}

/**
 * Compares a listed message with the sampled item it matches, if any; returns how it was matched
 * (undefined: not sampled, or its sampled item was compared already).
 */
export function compareSampledMessage(run: VerifyRun, sample: MessageSample, m: ChatMessage): MatchedBy | undefined {
  const hit = sample.take(m)
  if (hit === undefined) {
    return undefined
  }
  const s = hit.item
  const actual: Record<string, unknown> = {
    sender: m.sender,
    receiver: m.receiver,
    sentAt: m.sentAt,
    text: (m.data as { text?: unknown } | undefined)?.text ?? null,
  }
  for (const field of COMPARED_FIELDS) {
    if (JSON.stringify(actual[field]) === JSON.stringify(s.expected[field])) {
      continue
    }
    run.add({
      entity: 'messages',
      kind: 'field',
      targetKey: s.targetKey,
      legacyId: s.legacyId,
      field,
      // The report is stored as jsonb: a text the ledger or the platform holds with U+0000 is shown escaped.
      expected: storableValue(s.expected[field]),
      actual: storableValue(actual[field]),
      explained: s.changed,
      note: s.changed ? 'the source changed after loading (not resent): the platform has the older version' : 'differs from what the ledger sent',
    })
  }
  return hit.by
}

/** Sampled items that no listed message matched: not compared. */
export function unmatchedSample(sample: MessageSample): Sampled[] {
  return sample.items().filter((s) => !sample.isTaken(s))
}

/** A compared value as a report can store it (strings escaped by {@link storableText}). */
function storableValue(v: unknown): unknown {
  return typeof v === 'string' ? storableText(v) : v
}
