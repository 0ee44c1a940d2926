/**
 * The rows of each entity, each with the cursor a read resumes after:
 * - users: each service's chat Users (`{s, url, k}`: service, the page's URL, rows of it read),
 *   then the SMS/WhatsApp addresses of the participants (`{a}`) under `nonChatParticipants: users`;
 * - groups: the session's conversation list by index (`{n}`);
 * - members: each conversation's participants (`{c, k}`);
 * - messages: each conversation's messages oldest first (`Order=asc`, `{c, url, k}`).
 * Rows carry the outcomes of `nonChatParticipants` (`user-created`, `member-kept`,
 * `member-dropped`, `message-dropped`) and of the conversation state (`conversationState:
 * closed-archived`, `inactive-kept`), counted by planning.
 * Delta (`since`): rows whose `date_updated` (else `date_created`) is at or after it; messages are
 * read whole and filtered (Twilio's message list has no time filter).
 */
import type { Cursor, SourceRow } from '../../src/model/connector.ts'
import type { LegacyGroup, LegacyMember, LegacyMessage, LegacyUser } from '../../src/model/records.ts'
import { noted } from '../rows/outcomes.ts'
import { type PositionedRow } from '../rows/pages.ts'
import { decodeRow } from '../rows/problems.ts'
import type { TwilioClient } from './client.ts'
import type { Conversation } from './directory.ts'
import { isObject, str } from './entities/fields.ts'
import { addressUser, decodeConversation, decodeMessage, decodeParticipant, decodeUser, type Policy } from './entities/records.ts'

export interface RowsSource {
  readonly client: TwilioClient
  readonly services: readonly string[]
  readonly conversations: readonly Conversation[]
  readonly policy: Policy
  readonly apiPageSize: number
  readonly mediaBaseUrl: string
}

export interface RowsOptions {
  readonly after?: Cursor
  readonly since?: number
  readonly signal?: AbortSignal
}

const num = (c: Cursor | undefined, k: string) => (typeof c?.[k] === 'number' ? c[k] : -1)
const changed = (r: { updatedAt?: number; createdAt?: number; joinedAt?: number; sentAt?: number }) =>
  r.updatedAt ?? r.createdAt ?? r.joinedAt ?? r.sentAt
const keep = (changedAt: number | undefined, ok: boolean, since: number | undefined) =>
  since === undefined || !ok || (changedAt ?? -Infinity) >= since

/** The rows of a paged list from a cursor `{<index key>, url, k}`: fetch that page again and skip `k + 1` rows. */
async function* pagedFrom<T>(
  src: RowsSource,
  first: string,
  key: string,
  start: { url: string | null; skip: number },
  make: (item: Record<string, unknown>, pos: { url: string | null; k: number }) => PositionedRow<T> | undefined,
  signal?: AbortSignal,
): AsyncGenerator<PositionedRow<T>> {
  let url: string | null = start.url
  let skip = start.skip
  for (;;) {
    const page = await src.client.page(url ?? first, key, signal)
    for (const [k, item] of page.items.entries()) {
      if (k >= skip && isObject(item)) {
        const r = make(item, { url, k })
        if (r !== undefined) {
          yield r
        }
      }
    }
    skip = 0
    if (page.next === null) {
      return
    }
    url = page.next
  }
}

export async function* userRows(src: RowsSource, o: RowsOptions): AsyncGenerator<PositionedRow<LegacyUser>> {
  const inAddresses = typeof o.after?.a === 'number'
  if (!inAddresses) {
    for (let s = Math.max(num(o.after, 's'), 0); s < src.services.length; s++) {
      const svc = src.services[s] as string
      const start =
        s === num(o.after, 's') ? { url: typeof o.after?.url === 'string' ? o.after.url : null, skip: num(o.after, 'k') + 1 } : { url: null, skip: 0 }
      yield* pagedFrom<LegacyUser>(
        src,
        `/v1/Services/${svc}/Users?PageSize=${src.apiPageSize}`,
        'users',
        start,
        (u, pos) => {
          const row = decodeRow(str(u.identity) ?? str(u.sid) ?? '?', () => decodeUser(u))
          const at = row.ok ? changed(row.record) : undefined
          return keep(at, row.ok, o.since) ? { pos: { s, url: pos.url, k: pos.k }, row, ...(at !== undefined ? { changedAt: at } : {}) } : undefined
        },
        o.signal,
      )
    }
  }
  if (src.policy.nonChatParticipants !== 'users') {
    return
  }
  const seen = new Set<string>()
  let a = 0
  for (const c of src.conversations) {
    for (const p of c.participants) {
      const b = isObject(p.messaging_binding) ? p.messaging_binding : undefined
      const address = str(p.identity) === undefined ? str(b?.address) : undefined
      if (address === undefined || seen.has(address)) {
        continue
      }
      seen.add(address)
      if (a > num(o.after, 'a')) {
        const record = addressUser(address, String(b?.type ?? 'sms'), Date.parse(String(p.date_created)) || undefined)
        if (keep(record.createdAt, true, o.since)) {
          const row = { ok: true as const, record, outcomes: [{ policy: 'nonChatParticipants', outcome: 'user-created' }] }
          yield { pos: { a }, row, ...(record.createdAt !== undefined ? { changedAt: record.createdAt } : {}) }
        }
      }
      a++
    }
  }
}

export async function* groupRows(src: RowsSource, o: RowsOptions): AsyncGenerator<PositionedRow<LegacyGroup>> {
  for (let n = num(o.after, 'n') + 1; n < src.conversations.length; n++) {
    const c = src.conversations[n] as Conversation
    // Its state's outcome only when it decodes: a conversation rejected for its own reason was
    // neither archived nor kept.
    const row = decodeRow(str(c.value.sid) ?? '?', (out) => {
      const group = decodeConversation(c.value)
      for (const o of STATE_OUTCOMES[String(c.value.state)] ?? []) {
        out.add(o.policy, o.outcome)
      }
      return group
    })
    const at = row.ok ? changed(row.record) : undefined
    if (keep(at, row.ok, o.since)) {
      yield { pos: { n }, row, ...(at !== undefined ? { changedAt: at } : {}) }
    }
  }
}

export async function* memberRows(src: RowsSource, o: RowsOptions): AsyncGenerator<PositionedRow<LegacyMember>> {
  const startC = Math.max(num(o.after, 'c'), 0)
  for (let c = startC; c < src.conversations.length; c++) {
    const conv = src.conversations[c] as Conversation
    const sid = str(conv.value.sid)
    if (sid === undefined) {
      continue
    }
    for (let k = c === startC ? num(o.after, 'k') + 1 : 0; k < conv.participants.length; k++) {
      const p = conv.participants[k] as Record<string, unknown>
      const who = str(p.identity) ?? (isObject(p.messaging_binding) ? str(p.messaging_binding.address) : undefined) ?? str(p.sid) ?? '?'
      const row = participantRow(
        decodeRow(`${sid}/${who}`, () => decodeParticipant(sid, p, src.policy)),
        p,
      )
      const at = row.ok ? changed(row.record) : undefined
      if (keep(at, row.ok, o.since)) {
        yield { pos: { c, k }, row, ...(at !== undefined ? { changedAt: at } : {}) }
      }
    }
  }
}

/** A closed conversation is archived, an inactive one an ordinary group. */
const STATE_OUTCOMES: Record<string, { policy: string; outcome: string }[]> = {
  closed: [{ policy: 'conversationState', outcome: 'closed-archived' }],
  inactive: [{ policy: 'conversationState', outcome: 'inactive-kept' }],
}

/** An SMS/WhatsApp participant's membership, noted as kept (`users`) or dropped (`drop`). */
function participantRow<T>(row: SourceRow<T>, p: Record<string, unknown>): SourceRow<T> {
  if (str(p.identity) !== undefined || !isObject(p.messaging_binding) || str(p.messaging_binding.address) === undefined) {
    return row
  }
  const outcome = row.ok ? 'member-kept' : row.field === 'messaging_binding' ? 'member-dropped' : undefined
  return outcome === undefined ? row : noted(row, [{ policy: 'nonChatParticipants', outcome }])
}

/** Addresses of SMS/WhatsApp participants, whose messages are rejected under `drop`. */
function droppedAuthors(src: RowsSource): Set<string> {
  const out = new Set<string>()
  if (src.policy.nonChatParticipants === 'drop') {
    for (const c of src.conversations) {
      for (const p of c.participants) {
        const address = str(p.identity) === undefined && isObject(p.messaging_binding) ? str(p.messaging_binding.address) : undefined
        if (address !== undefined) {
          out.add(address)
        }
      }
    }
  }
  return out
}

export async function* messageRows(src: RowsSource, o: RowsOptions): AsyncGenerator<PositionedRow<LegacyMessage>> {
  const dropped = droppedAuthors(src)
  const startC = Math.max(num(o.after, 'c'), 0)
  for (let c = startC; c < src.conversations.length; c++) {
    const conv = src.conversations[c] as Conversation
    const sid = str(conv.value.sid)
    if (sid === undefined) {
      continue
    }
    const ctx = { conversation: sid, serviceSid: conv.serviceSid, mediaBaseUrl: src.mediaBaseUrl, droppedAuthors: dropped }
    const start =
      c === startC && o.after !== undefined
        ? { url: typeof o.after.url === 'string' ? o.after.url : null, skip: num(o.after, 'k') + 1 }
        : { url: null, skip: 0 }
    yield* pagedFrom<LegacyMessage>(
      src,
      `/v1/Services/${conv.serviceSid}/Conversations/${sid}/Messages?Order=asc&PageSize=${src.apiPageSize}`,
      'messages',
      start,
      (m, pos) => {
        const decoded = decodeRow(str(m.sid) ?? `${sid}#${String(m.index)}`, () => decodeMessage(m, ctx))
        const droppedAuthor = !decoded.ok && decoded.field === 'author' && dropped.has(String(m.author))
        const row = droppedAuthor ? noted<LegacyMessage>(decoded, [{ policy: 'nonChatParticipants', outcome: 'message-dropped' }]) : decoded
        const at = row.ok ? changed(row.record) : undefined
        return keep(at, row.ok, o.since) ? { pos: { c, url: pos.url, k: pos.k }, row, ...(at !== undefined ? { changedAt: at } : {}) } : undefined
      },
      o.signal,
    )
  }
}
