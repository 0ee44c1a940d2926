/**
 * Retention edge: the platform refuses messages older than its retention window, and a plan judges
 * that window at planning time — but a load lasts days. Messages go out oldest first, after every
 * user, group and member, one request of `itemsPerRequest` items every `60 / requestsPerMinute`
 * seconds. This estimates, message by message, when each one is sent and counts those whose
 * `sentAt` is older than the window by then.
 *
 * Formula: the item at 0-based queue position `p` goes in request `k = ⌊p / itemsPerRequest⌋`, sent
 * at `start + k × 60 000 / requestsPerMinute` ms. A message sent at `t` ages out when
 * `sentAt < t − retentionDays × 86 400 000`. Messages are counted per minute of `sentAt` (bounded
 * memory); a minute's messages are judged by the minute's start, so the estimate may warn up to one
 * minute early, never late.
 */

const DAY_MS = 86_400_000
const MINUTE_MS = 60_000

/** Messages to send per minute of their `sentAt`: minute (epoch ms ÷ 60 000, floored) → count. */
export type MinuteCounts = Map<number, number>

/** Adds one message sent at `sentAtMs` to `counts`. */
export function countMinute(counts: MinuteCounts, sentAtMs: number): void {
  const m = Math.floor(sentAtMs / MINUTE_MS)
  counts.set(m, (counts.get(m) ?? 0) + 1)
}

export interface RetentionEdgeInput {
  /** When the load starts (epoch ms): now for `plan`, now for `status` with what is left. */
  readonly startMs: number
  /** Items sent before the first message (users, groups, members still to send). */
  readonly itemsAhead: number
  /** Messages still to send, per minute of `sentAt`. */
  readonly messages: ReadonlyMap<number, number> | readonly (readonly [number, number])[]
  readonly retentionDays: number
  readonly requestsPerMinute: number
  readonly itemsPerRequest: number
}

export interface RetentionEdge {
  /** Messages to send. */
  readonly messages: number
  /** Of those, sent after they left the retention window. */
  readonly agingOut: number
  /** The oldest and newest `sentAt` (ISO minute) among them; null when none. */
  readonly oldestAgingOut: string | null
  readonly newestAgingOut: string | null
  /** When the first message is sent (seconds after the start), and the last one. */
  readonly firstMessageSeconds: number
  readonly lastMessageSeconds: number
  /** Days between the oldest message to send and the retention edge at the start (null: none). */
  readonly oldestMarginDays: number | null
}

/** When the item at queue position `p` is sent, in ms after the start. */
export function sendOffsetMs(p: number, requestsPerMinute: number, itemsPerRequest: number): number {
  return (Math.floor(p / itemsPerRequest) * MINUTE_MS) / requestsPerMinute
}

/** Counts the messages that will have aged out of the retention window when their turn comes. */
export function retentionEdge(input: RetentionEdgeInput): RetentionEdge {
  const { startMs, itemsAhead, retentionDays, requestsPerMinute: rpm, itemsPerRequest: ipr } = input
  const minutes = [...input.messages].sort((a, b) => a[0] - b[0])
  const retentionMs = retentionDays * DAY_MS
  let p = itemsAhead
  let agingOut = 0
  let oldest: number | null = null
  let newest: number | null = null
  for (const [minute, count] of minutes) {
    // The message ages out when sent after its edge: sentAt + retention.
    const edgeMs = minute * MINUTE_MS + retentionMs - startMs
    // First request sent strictly after the edge: k·60 000/rpm > edge ⇔ k > edge·rpm/60 000.
    const firstLateRequest = edgeMs < 0 ? 0 : Math.floor((edgeMs * rpm) / MINUTE_MS) + 1
    const firstLate = Math.max(p, firstLateRequest * ipr)
    const late = Math.max(0, p + count - firstLate)
    if (late > 0) {
      agingOut += late
      oldest ??= minute
      newest = minute
    }
    p += count
  }
  const total = p - itemsAhead
  const first = minutes[0]
  const iso = (m: number | null) => (m === null ? null : new Date(m * MINUTE_MS).toISOString())
  return {
    messages: total,
    agingOut,
    oldestAgingOut: iso(oldest),
    newestAgingOut: iso(newest),
    firstMessageSeconds: total > 0 ? sendOffsetMs(itemsAhead, rpm, ipr) / 1000 : 0,
    lastMessageSeconds: total > 0 ? sendOffsetMs(p - 1, rpm, ipr) / 1000 : 0,
    oldestMarginDays: first ? (first[0] * MINUTE_MS + retentionMs - startMs) / DAY_MS : null,
  }
}

/** What an operator can do about messages aging out, one sentence (empty when none do). */
export function retentionEdgeAdvice(edge: RetentionEdge, retentionDays: number): string {
  if (edge.agingOut === 0) {
    return ''
  }
  const days = (s: number) => (s / 86_400).toFixed(1)
  return (
    `${edge.agingOut.toLocaleString('en-US')} of ${edge.messages.toLocaleString('en-US')} messages to send ` +
    `(sent ${edge.oldestAgingOut?.slice(0, 16)} … ${edge.newestAgingOut?.slice(0, 16)} UTC) will be older than ${retentionDays} days ` +
    `when their turn comes (messages start after ${days(edge.firstMessageSeconds)} d of users, groups and members and go oldest first, ` +
    `already the best order; the last is sent after ${days(edge.lastMessageSeconds)} d): start the load now, ` +
    'skip them (retention.retentionDays lower), ask for extended retention (retention.oldMessages: send) or a higher quota, ' +
    'or split the job so the oldest conversations load first'
  )
}
