/**
 * Verify, messages field by field: a deterministic sample of the ledger's done messages, each
 * compared on {@link COMPARED_FIELDS} with the platform's copy when the message list passes it:
 * sender, receiver, sentAt and text from the item's current payload (an applied edit advances it),
 * and `editedAt`/`deletedAt` set exactly when a `message.edit`/`message.delete` update of the item
 * is done (`expected-state.ts`); a difference an update still waiting explains is marked explained.
 * Listed messages are matched with sampled items by legacy id, else by fingerprint
 * (`src/target/message-match.ts`); sampled items no listed message matched are reported, never skipped.
 * With `files.rewriteTextLinks` the expected text has the links to copied files rewritten as the
 * loader sent them, and a listed text matches when each such link is either rewritten or still the
 * legacy URL (a file copied after its message was sent, or a rewrite over the limits).
 */
import { linkCandidates, matchesWithLinks, replaceTextLinks, storableText } from '../state/index.ts'
import { type MatchedBy, MessageIndex, type MessageShape } from '../target/message-match.ts'
import type { ChatMessage } from '../target/schemas.ts'
import { expectedMessageMarks, explainDifference, type ItemUpdate } from './expected-state.ts'
import { changedOnPlatformNote } from './foreign-items.ts'
import type { VerifyRun } from './verify-run.ts'

export const COMPARED_FIELDS = ['sender', 'receiver', 'sentAt', 'text', 'editedAt', 'deletedAt'] as const

/** What `editedAt`/`deletedAt` are expected to be: set (some time) or absent. */
const SET = 'set'

export interface Sampled {
  readonly targetKey: string
  readonly legacyId: string
  /** The source changed after loading: a difference is explained. */
  readonly changed: boolean
  /** The item's update intents, oldest first. */
  readonly updates: readonly ItemUpdate[]
  readonly expected: Record<(typeof COMPARED_FIELDS)[number], unknown>
  /** `files.rewriteTextLinks`: the planned text and the links to copied files it names (legacy URL → public URL). */
  readonly textLinks?: { readonly planned: string; readonly links: ReadonlyMap<string, string> }
}

/** The sampled messages, by legacy key and fingerprint. */
export type MessageSample = MessageIndex<Sampled>

/** Up to `size` done messages of the ledger, the same ones for the same ledger. */
export async function loadMessageSample(run: VerifyRun, size: number): Promise<MessageSample> {
  const sample: MessageSample = new MessageIndex(run.legacyMetadataKey)
  if (size <= 0) {
    return sample
  }
  const rows = await run.lookups.messageSample(run.jobId, size)
  const updates = new Map<string, ItemUpdate[]>()
  for (const u of await run.lookups.itemUpdates(
    run.jobId,
    'messages',
    rows.map((r) => r.target_key),
  )) {
    updates.set(u.target_key, [...(updates.get(u.target_key) ?? []), { kind: u.kind, status: u.status }])
  }
  const parsed = rows.map((r) => ({ r, p: JSON.parse(r.payload) as MessageShape & { data?: { text?: string } } }))
  const links = run.rewriteTextLinks
    ? await run.lookups.copiedFileLinks(run.jobId, [...new Set(parsed.flatMap(({ p }) => linkCandidates(p.data?.text ?? '')))])
    : new Map<string, string>()
  for (const { r, p } of parsed) {
    const mine = updates.get(r.target_key) ?? []
    const marks = expectedMessageMarks(mine)
    const planned = p.data?.text
    const rewritten = planned === undefined ? undefined : replaceTextLinks(planned, links)
    sample.add(
      {
        targetKey: r.target_key,
        legacyId: r.legacy_id,
        changed: r.changed,
        updates: mine,
        expected: {
          sender: p.sender,
          receiver: p.receiver,
          sentAt: p.sentAt,
          text: rewritten?.text ?? null,
          editedAt: marks.edited ? SET : null,
          deletedAt: marks.deleted ? SET : null,
        },
        ...(planned !== undefined && rewritten !== undefined && rewritten.rewritten > 0 ? { textLinks: { planned, links } } : {}),
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
  const marks = m as { editedAt?: unknown; deletedAt?: unknown }
  const actual: Record<string, unknown> = {
    sender: m.sender,
    receiver: m.receiver,
    sentAt: m.sentAt,
    text: (m.data as { text?: unknown } | undefined)?.text ?? null,
    editedAt: marks.editedAt ?? null,
    deletedAt: marks.deletedAt ?? null,
  }
  for (const field of COMPARED_FIELDS) {
    const same =
      field === 'editedAt' || field === 'deletedAt'
        ? (s.expected[field] === SET) === (actual[field] !== null)
        : field === 'text' && s.textLinks !== undefined && typeof actual.text === 'string'
          ? matchesWithLinks(actual.text, s.textLinks.planned, s.textLinks.links)
          : JSON.stringify(actual[field]) === JSON.stringify(s.expected[field])
    if (same) {
      continue
    }
    const why = explainDifference(
      s.updates,
      s.changed,
      changedOnPlatformNote('differs from what the ledger sent and the updates applied to it'),
      run.advice,
    )
    run.add({
      entity: 'messages',
      kind: 'field',
      targetKey: s.targetKey,
      legacyId: s.legacyId,
      field,
      // The report is stored as jsonb: a text the ledger or the platform holds with U+0000 is shown escaped.
      expected: storableValue(s.expected[field]),
      actual: storableValue(actual[field]),
      explained: why.explained,
      note: why.note,
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
