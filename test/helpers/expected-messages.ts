/**
 * The oracle's messages (mappings/README.md § Message policies, in their documented order), stated
 * from a canonical record and what was planned before it: which records become items and which are
 * skipped or rejected; muid, sender, receiver, category, type, sentAt, attachments, custom data; the
 * text where the rules state it exactly; the documented metadata (legacy id, thread parent, edit
 * and delete times, reactions). Participants: expected-participants.ts; type, text and
 * attachments: expected-content.ts.
 */
import type { LegacyAttachment, LegacyMessage } from '../../src/model/index.ts'
import { attachmentFacts, textCheck, typeOf } from './expected-content.ts'
import { type ItemFacts, state } from './expected-facts.ts'
import { platformIdOf } from './expected-ids.ts'
import { participants } from './expected-participants.ts'
import {
  type Decided,
  decided,
  expectItem,
  hasUnstorable,
  isPlanned,
  jsonBytes,
  metadataFacts,
  type Outcome,
  reject,
  seconds,
  skip,
  stripped,
  type World,
} from './expected-world.ts'

/** A message's `data` may hold 10 KB; within a kilobyte of it, what chatferry adds decides, so the oracle does not say. */
const DATA_MAX = 10 * 1024
const MARGIN = 1024

function badId(m: LegacyMessage): string | undefined {
  const ids: [string, unknown][] = [
    ['id', m.id],
    ['senderId', m.senderId],
    ['receiverId', m.receiverId],
    ['threadParentId', m.threadParentId],
    ...(m.mentions ?? []).map((x, i): [string, unknown] => [`mentions.${i}`, x]),
    ...(m.reactions ?? []).map((r, i): [string, unknown] => [`reactions.${i}.userId`, r.userId]),
  ]
  return ids.find(([, v]) => typeof v === 'string' && hasUnstorable(v))?.[0]
}

/** What the policies before the participants decide: the content of the item, or the skip or reject. */
interface Content {
  readonly tombstone: boolean
  readonly asSystem: boolean
  readonly custom: boolean
  readonly attachments: readonly LegacyAttachment[]
  /** The text before mentions, quotes and splitting. */
  readonly base: string | undefined
}

/** retention → deletes → systemMessages → threads → brokenAttachments → custom data → emptyMessages. */
function content(w: World, m: LegacyMessage): Outcome<Content> {
  const p = w.policies
  if (p.retention.oldMessages === 'skip' && m.sentAt < w.now - p.retention.retentionDays * 86_400_000) {
    return { skip: 'retention' }
  }
  const tombstone = m.deletedAt !== undefined
  if (tombstone && p.deletes.mode === 'skip') {
    return { skip: 'deletes' }
  }
  const asSystem = m.systemKind !== undefined
  if (asSystem && p.systemMessages.mode === 'skip') {
    return { skip: 'systemMessages' }
  }
  if (m.threadParentId !== undefined && p.threads.replies === 'skip') {
    return { skip: 'threads' }
  }
  // brokenAttachments: drop (an attachment without a URL). A tombstone, and a system message sent
  // as the system user, are text messages: no attachments.
  const textOnly = tombstone || asSystem
  const attachments = textOnly ? [] : (m.attachments ?? []).filter((a) => typeof a.url === 'string' && a.url !== '')
  const custom = m.type === 'custom' && !textOnly
  if (custom && m.customData === undefined) {
    return { reject: 'customData' }
  }
  const base = tombstone ? p.deletes.tombstoneText : asSystem && !m.text?.trim() ? `[${m.systemKind}]` : m.text
  if (!custom && attachments.length === 0 && !base?.trim()) {
    return { skip: 'emptyMessages' }
  }
  return { tombstone, asSystem, custom, attachments, base }
}

/** A message that yields no item: skipped (its replies then find it skipped) or rejected. */
function settle(w: World, id: string, d: Decided): void {
  if ('skip' in d) {
    w.messages.set(id, { skipped: d.skip })
    return skip(w, 'messages', id, d.skip)
  }
  reject(w, 'messages', id, d.reject)
}

export function expectMessage(w: World, raw: LegacyMessage): void {
  const bad = badId(raw)
  if (bad !== undefined) {
    return reject(w, 'messages', raw.id, bad)
  }
  const m = stripped(raw)
  const sentAt = seconds(m.sentAt)
  const c = sentAt === undefined ? { reject: 'sentAt' } : content(w, m)
  if (decided(c)) {
    return settle(w, m.id, c)
  }
  const who = participants(w, m, c.asSystem)
  if (decided(who)) {
    return settle(w, m.id, who)
  }
  const muid = platformIdOf(m.id)
  const facts: ItemFacts = new Map()
  state(facts, ['sender'], { eq: who.sender.uid })
  state(facts, ['receiver_type'], { eq: m.receiverType })
  state(facts, ['receiver'], { eq: who.receiver })
  state(facts, ['category'], { eq: c.custom ? 'custom' : 'message' })
  const type = c.tombstone || c.asSystem ? 'text' : c.custom ? undefined : typeOf(m, c.attachments)
  if (type !== undefined) {
    state(facts, ['type'], { eq: type })
  }
  state(facts, ['sent_at'], { eq: sentAt })
  state(facts, ['tags'], { eq: null })
  dataFacts(w, m, c, muid, facts)
  w.messages.set(m.id, { muid, senderName: who.sender.name, hasText: c.base !== undefined && c.base.trim() !== '' })
  expectItem(w, 'messages', muid, m.id, facts)
}

/** `data`: its metadata, and its text, attachments and custom data — or, over 10 KB, the split (`longText`). */
function dataFacts(w: World, m: LegacyMessage, c: Content, muid: string, facts: ItemFacts): void {
  const legacy = legacyOf(w, m, c.tombstone)
  const customData = c.custom ? m.customData : undefined
  const bytes = jsonBytes({ text: c.base, attachments: c.attachments, customData, metadata: { ...m.metadata, legacy } })
  if (bytes > DATA_MAX - MARGIN && bytes <= DATA_MAX + MARGIN) {
    throw new Error(`expected-items: message ${m.id}'s data is about ${bytes} bytes, too near the 10 KB limit to say whether longText splits it`)
  }
  metadataFacts(facts, ['data', 'metadata'], m.metadata, {}, legacy)
  const text = textCheck(w, m, c.base, c.tombstone)
  if (bytes > DATA_MAX) {
    // Split into parts, whose numbers and texts compareWithExpected checks.
    w.items.splits.set(muid, { text: text !== undefined && 'eq' in text && c.attachments.length === 0 ? (text.eq as string) : undefined })
    return
  }
  if (text !== undefined) {
    state(facts, ['data', 'text'], text)
  }
  attachmentFacts(facts, c.attachments)
  if (customData !== undefined) {
    state(facts, ['data', 'customData'], { eq: customData })
  }
}

/** chatferry's documented metadata of a message: legacy id, thread parent, edit and delete times, reactions. */
function legacyOf(w: World, m: LegacyMessage, tombstone: boolean): Record<string, unknown> {
  const legacy: Record<string, unknown> = { id: m.id }
  if (m.threadParentId !== undefined) {
    legacy.parent = { id: m.threadParentId, muid: platformIdOf(m.threadParentId) }
  }
  const editedAt = seconds(m.editedAt)
  if (editedAt !== undefined) {
    legacy.editedAt = editedAt
  }
  const deletedAt = seconds(m.deletedAt)
  if (tombstone && deletedAt !== undefined) {
    legacy.deletedAt = deletedAt
  }
  const reactions = tombstone ? undefined : reactionsOf(w, m)
  if (reactions !== undefined && reactions !== null) {
    legacy.reactions = reactions
  }
  return legacy
}

/**
 * `reactions: metadata`: `{"<emoji>": [uid, …]}`; undefined without reactions; null (not stated)
 * when a reactor is not a planned user (`reactor-unknown`).
 */
function reactionsOf(w: World, m: LegacyMessage): Record<string, string[]> | undefined | null {
  if (m.reactions === undefined || m.reactions.length === 0) {
    return undefined
  }
  const out: Record<string, string[]> = {}
  for (const r of m.reactions) {
    const u = w.users.get(r.userId)
    if (!isPlanned(u)) {
      return null
    }
    ;(out[r.emoji] ??= []).push(u.uid)
  }
  return out
}
