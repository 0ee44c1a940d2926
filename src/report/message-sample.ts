/**
 * Verify, messages field by field: a deterministic sample of the ledger's done messages, each
 * compared on {@link COMPARED_FIELDS} with the platform's copy when the message list passes it.
 */
import { storableText } from '../state/index.ts'
import type { ChatMessage } from '../target/schemas.ts'
import type { VerifyRun } from './verify-run.ts'

export const COMPARED_FIELDS = ['sender', 'receiver', 'sentAt', 'text'] as const

interface Sampled {
  legacyId: string
  /** The source changed after loading: a difference is explained. */
  changed: boolean
  expected: Record<(typeof COMPARED_FIELDS)[number], unknown>
  /** Compared already (a message listed twice is compared once). */
  seen: boolean
}

/** The sampled messages by muid. */
export type MessageSample = Map<string, Sampled>

/** Up to `size` done messages of the ledger, the same ones for the same ledger. */
export async function loadMessageSample(run: VerifyRun, size: number): Promise<MessageSample> {
  const sample: MessageSample = new Map()
  if (size <= 0) return sample
  for (const r of await run.lookups.messageSample(run.jobId, size)) {
    const p = JSON.parse(r.payload) as { sender: string; receiver: string; sentAt: number; data?: { text?: string } }
    sample.set(r.target_key, { legacyId: r.legacy_id, changed: r.changed, expected: { sender: p.sender, receiver: p.receiver, sentAt: p.sentAt, text: p.data?.text ?? null }, seen: false })
  }
  return sample
}

/** Compares a listed message (its `muid`) with its sampled ledger copy, if sampled; returns true when it was compared. */
export function compareSampledMessage(run: VerifyRun, sample: MessageSample, muid: string, m: ChatMessage): boolean {
  const s = sample.get(muid)
  if (s === undefined || s.seen) return false
  s.seen = true
  const actual: Record<string, unknown> = { sender: m.sender, receiver: m.receiver, sentAt: m.sentAt, text: (m.data as { text?: unknown } | undefined)?.text ?? null }
  for (const field of COMPARED_FIELDS) {
    if (JSON.stringify(actual[field]) === JSON.stringify(s.expected[field])) continue
    run.add({
      entity: 'messages',
      kind: 'field',
      targetKey: muid,
      legacyId: s.legacyId,
      field,
      // The report is stored as jsonb: a text the ledger or the platform holds with U+0000 is shown escaped.
      expected: storableValue(s.expected[field]),
      actual: storableValue(actual[field]),
      explained: s.changed,
      note: s.changed ? 'the source changed after loading (not resent): the platform has the older version' : 'differs from what the ledger sent',
    })
  }
  return true
}

/** A compared value as a report can store it (strings escaped by {@link storableText}). */
function storableValue(v: unknown): unknown {
  return typeof v === 'string' ? storableText(v) : v
}
