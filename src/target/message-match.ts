/**
 * How `verify` (src/report) and the loader's read-back after a bad-row 500 (src/load) tell which
 * ledger item a listed message is, without `muid`: the platform's message list does not return it
 * (cometchat/docs `chat-apis.json`, `GET /messages`: `id, conversationId, sender, receiverType,
 * receiver, category, type, data, sentAt, updatedAt`), but it does return
 * `data.metadata`, where chatferry writes every message's legacy id
 * (`data.metadata[<policies.legacyMetadata.key>].id`, and `.part.n` on each part of a long text
 * that was split). A listed message is matched with a ledger item:
 *
 * 1. by **legacy id** (and part number, 1 when the message was not split) when it carries one;
 * 2. otherwise by its **fingerprint**: sender, receiverType, receiver, sentAt and `data.text`
 *    (messages imported without legacy ids: `legacyMetadata.ids: false`, a user module that removes
 *    them, or an older chatferry).
 *
 * Both keys of a ledger item are computed from the payload the ledger sent, so the two sides are
 * keyed by the same functions.
 */
import { createHash } from 'node:crypto'

/** How a listed message was matched with a ledger item. */
export type MatchedBy = 'legacyId' | 'fingerprint'

/** What both a ledger payload and a listed message have. */
export interface MessageShape {
  readonly sender: string
  readonly receiverType: string
  readonly receiver: string
  readonly sentAt: number
  readonly data?: Readonly<Record<string, unknown>> | undefined
}

/** chatferry's own metadata of a message (`data.metadata[key]`), when it is an object. */
function ownMetadata(m: MessageShape, metadataKey: string): Record<string, unknown> | undefined {
  const metadata = m.data?.metadata
  if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) {
    return undefined
  }
  const own = (metadata as Record<string, unknown>)[metadataKey]
  return typeof own === 'object' && own !== null && !Array.isArray(own) ? (own as Record<string, unknown>) : undefined
}

/** The legacy id chatferry wrote into the message's metadata, if any. */
export function legacyIdOf(m: MessageShape, metadataKey: string): string | undefined {
  const id = ownMetadata(m, metadataKey)?.id
  return typeof id === 'string' || typeof id === 'number' ? String(id) : undefined
}

/** The legacy id and part number (1 for a message sent in one piece), or undefined without a legacy id. */
function legacyRef(m: MessageShape, metadataKey: string): { id: string; n: number } | undefined {
  const own = ownMetadata(m, metadataKey)
  const id = legacyIdOf(m, metadataKey)
  if (own === undefined || id === undefined) {
    return undefined
  }
  const part = own.part as { n?: unknown } | undefined
  return { id, n: typeof part === 'object' && part !== null && typeof part.n === 'number' ? part.n : 1 }
}

/** `legacy` + the legacy id + the part number, or undefined without a legacy id. */
export function legacyKeyOf(m: MessageShape, metadataKey: string): string | undefined {
  const ref = legacyRef(m, metadataKey)
  return ref === undefined ? undefined : JSON.stringify(['legacy', ref.id, ref.n])
}

/**
 * A message's share of its conversation's legacy-id digest: the first 48 bits of
 * md5(`<id>` U+001F `<part>`), 0 without a legacy id. The ledger sums the same in SQL
 * (`count-done-messages-per-conversation.ts`), so a conversation where one message was swapped for
 * another has the same count but another digest.
 */
export function legacyDigestOf(m: MessageShape, metadataKey: string): bigint {
  const ref = legacyRef(m, metadataKey)
  if (ref === undefined) {
    return 0n
  }
  return BigInt(
    `0x${createHash('md5')
      .update(`${ref.id}\u001f${String(ref.n)}`)
      .digest('hex')
      .slice(0, 12)}`,
  )
}

/** A hash of sender, receiverType, receiver, sentAt and text (null without one). */
export function fingerprintOf(m: MessageShape): string {
  const text = m.data?.text
  const parts = [m.sender, m.receiverType, m.receiver, m.sentAt, typeof text === 'string' ? text : null]
  return `fp:${createHash('sha256').update(JSON.stringify(parts)).digest('base64url')}`
}

/**
 * Ledger items by legacy key and by fingerprint. `take` hands each item out at most once, so a
 * message listed twice, or two identical messages, are told apart by count.
 */
export class MessageIndex<T> {
  private readonly byLegacy = new Map<string, T[]>()
  private readonly byFingerprint = new Map<string, T[]>()
  private readonly taken = new Set<T>()
  private readonly all: T[] = []
  private readonly metadataKey: string

  /** `metadataKey`: `policies.legacyMetadata.key`, where chatferry wrote the legacy ids. */
  constructor(metadataKey: string) {
    this.metadataKey = metadataKey
  }

  /** Indexes `item` under the keys of `shape` (its payload as sent). */
  add(item: T, shape: MessageShape): void {
    this.all.push(item)
    const legacy = legacyKeyOf(shape, this.metadataKey)
    if (legacy !== undefined) {
      push(this.byLegacy, legacy, item)
    }
    push(this.byFingerprint, fingerprintOf(shape), item)
  }

  /**
   * The first item not taken yet that a listed message matches: by its legacy key when it carries
   * one, else by its fingerprint. A message that carries a legacy id is never matched by
   * fingerprint, so an unexpected copy of a message cannot take the original's place.
   */
  take(m: MessageShape): { item: T; by: MatchedBy } | undefined {
    const { by, candidates } = this.candidates(m)
    const item = candidates?.find((c) => !this.taken.has(c))
    if (item === undefined) {
      return undefined
    }
    this.taken.add(item)
    return { item, by }
  }

  /** The item a listed message matches when other listed messages took all its matches already (it is listed twice). */
  takenMatch(m: MessageShape): T | undefined {
    const { candidates } = this.candidates(m)
    return candidates !== undefined && candidates.every((c) => this.taken.has(c)) ? candidates[0] : undefined
  }

  private candidates(m: MessageShape): { by: MatchedBy; candidates: T[] | undefined } {
    const legacy = legacyKeyOf(m, this.metadataKey)
    return legacy === undefined
      ? { by: 'fingerprint', candidates: this.byFingerprint.get(fingerprintOf(m)) }
      : { by: 'legacyId', candidates: this.byLegacy.get(legacy) }
  }

  /** True when `item` was taken by a listed message. */
  isTaken(item: T): boolean {
    return this.taken.has(item)
  }

  /** Every item, in the order added. */
  items(): readonly T[] {
    return this.all
  }
}

function push<T>(map: Map<string, T[]>, key: string, item: T): void {
  const list = map.get(key)
  if (list === undefined) {
    map.set(key, [item])
  } else {
    list.push(item)
  }
}
