/**
 * Which rows of a message batch landed, from what the platform's message list shows (pure; the
 * reading is read-back.ts). The list carries no `muid`, so a listed message is matched with a row
 * the way `verify` matches it (src/target/message-match.ts): by the legacy id chatferry wrote into
 * `data.metadata[<legacyMetadata.key>]`, else by sender, receiver, sentAt and text. Each row is
 * matched at most once, so two identical rows need two listed messages.
 */
import type { BatchItem } from '../state/batch-ledger.ts'
import { MessageIndex, type MessageShape } from '../target/message-match.ts'

/** A row of the batch with the fields the list shows. */
export interface RowShape {
  readonly key: string
  readonly shape: MessageShape
}

/** A sentAt range (epoch seconds, both ends included) to list. */
export interface ReadBackWindow {
  readonly from: number
  readonly to: number
  /** The keys of the rows whose sentAt is in it. */
  readonly keys: readonly string[]
}

/**
 * The rows' shapes from their stored payloads, or undefined when one cannot be read (then the
 * read-back cannot decide and the batch takes the ordinary path).
 */
export function rowShapes(items: readonly BatchItem[]): RowShape[] | undefined {
  const rows: RowShape[] = []
  for (const item of items) {
    let p: unknown
    try {
      p = JSON.parse(item.payload)
    } catch {
      return undefined
    }
    const m = p as Partial<Record<keyof MessageShape, unknown>>
    if (typeof m.sender !== 'string' || typeof m.receiverType !== 'string' || typeof m.receiver !== 'string' || typeof m.sentAt !== 'number') {
      return undefined
    }
    const data = typeof m.data === 'object' && m.data !== null ? (m.data as Record<string, unknown>) : undefined
    rows.push({ key: item.key, shape: { sender: m.sender, receiverType: m.receiverType, receiver: m.receiver, sentAt: m.sentAt, data } })
  }
  return rows
}

/**
 * The sentAt ranges to list: the rows sorted by sentAt, a new range wherever two neighbours are
 * more than `gapSeconds` apart. Messages drain oldest first, so a batch is usually one narrow range
 * holding little besides its own rows; a row far from the rest (a reply flattened after its
 * thread, a message planned later) gets its own range instead of widening the first one.
 */
export function readBackWindows(rows: readonly RowShape[], gapSeconds: number): ReadBackWindow[] {
  const sorted = [...rows].sort((a, b) => a.shape.sentAt - b.shape.sentAt)
  const windows: { from: number; to: number; keys: string[] }[] = []
  for (const r of sorted) {
    const last = windows[windows.length - 1]
    if (last !== undefined && r.shape.sentAt - last.to <= gapSeconds) {
      last.to = r.shape.sentAt
      last.keys.push(r.key)
    } else {
      windows.push({ from: r.shape.sentAt, to: r.shape.sentAt, keys: [r.key] })
    }
  }
  return windows
}

/** Merges the nearest neighbouring ranges until at most `max` are left (each range costs at least one request). */
export function mergeWindows(windows: readonly ReadBackWindow[], max: number): ReadBackWindow[] {
  const out = [...windows]
  while (out.length > Math.max(1, max)) {
    let best = 0
    for (let i = 1; i < out.length - 1; i++) {
      if (
        (out[i + 1] as ReadBackWindow).from - (out[i] as ReadBackWindow).to <
        (out[best + 1] as ReadBackWindow).from - (out[best] as ReadBackWindow).to
      ) {
        best = i
      }
    }
    const a = out[best] as ReadBackWindow
    const b = out[best + 1] as ReadBackWindow
    out.splice(best, 2, { from: a.from, to: b.to, keys: [...a.keys, ...b.keys] })
  }
  return out
}

/** Matches listed messages with the batch's rows; returns the listed message of each row found. */
export class LandedRows {
  private readonly index: MessageIndex<RowShape>
  private readonly found = new Map<string, MessageShape>()

  constructor(rows: readonly RowShape[], metadataKey: string) {
    this.index = new MessageIndex<RowShape>(metadataKey)
    for (const r of rows) {
      this.index.add(r, r.shape)
    }
  }

  /** Takes the row a listed message is (if any of this batch); messages of other batches are ignored. */
  see(listed: MessageShape): void {
    const hit = this.index.take(listed)
    if (hit !== undefined) {
      this.found.set(hit.item.key, listed)
    }
  }

  has(key: string): boolean {
    return this.found.has(key)
  }

  get size(): number {
    return this.found.size
  }

  /** The listed message that showed `key` landed. */
  listed(key: string): MessageShape | undefined {
    return this.found.get(key)
  }
}

/** What the read-back says about the batch: `none` landed (an ordinary failed request), `some` or `all`. */
export type LandedVerdict = 'none' | 'some' | 'all'

export function landedVerdict(rows: number, landed: number): LandedVerdict {
  return landed === 0 ? 'none' : landed === rows ? 'all' : 'some'
}
