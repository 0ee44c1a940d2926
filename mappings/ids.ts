/**
 * The id policy: how a legacy id becomes a platform id (uid, guid, muid), and how two legacy ids
 * that would land on the same platform id are kept apart.
 *
 * The platform lowercases ids and accepts only `[a-z0-9_-]`, at most 100 characters
 * (target-platform-facts.md §2, §4.3). {@link toPlatformId} follows the platform vendor's own
 * `toCometChatId()` rule, so ids are predictable by anyone who knows it:
 *
 * - an id that is already lowercase alpha-dash and at most 100 characters is kept as is;
 * - otherwise it is lowercased, every character outside `[a-z0-9_-]` becomes `_`, the result is cut
 *   to 90 characters, and `_` + a 9-character base-36 hash of the **original** id is appended
 *   (at most 90 + 1 + 9 = 100 characters).
 *
 * Collisions (`ABC` → `abc_<hash>` while another legacy id is literally `abc_<hash>`, or a hash
 * collision) are resolved by an {@link IdRegistry}: the first legacy id to claim a platform id
 * keeps it, a later one gets a distinct deterministic alternative, and every decision is an entry
 * the ledger persists (`id_map`) and loads back, so later runs reuse it.
 */
import { isPlatformId } from '../src/target/schemas.ts'

/** Kinds of ids that go through the registry. Message muids derive from message ids directly. */
export const ID_KINDS = ['user', 'group'] as const
export type IdKind = (typeof ID_KINDS)[number]

/** One decision of the registry: `legacyId` of `kind` is `platformId` on the platform. */
export interface IdMapEntry {
  readonly kind: IdKind
  readonly legacyId: string
  readonly platformId: string
}

/** Characters kept from the cleaned id before the hash suffix. */
export const ID_PREFIX_MAX = 90
/** Length of the base-36 hash suffix (46 bits < 36^9). */
export const ID_HASH_LENGTH = 9

const HASH_BITS_HIGH = 0x3fff // 14 bits of the high word + 32 of the low word = 46 bits

/**
 * A stable 46-bit hash of a string (cyrb53 with seed 0, over UTF-16 code units, so every distinct
 * string — lone surrogates included — hashes on its own), as 9 base-36 characters. Never change it:
 * platform ids already sent depend on it.
 */
export function stableHash(value: string, seed = 0): string {
  let h1 = 0xdeadbeef ^ seed
  let h2 = 0x41c6ce57 ^ seed
  for (let i = 0; i < value.length; i++) {
    const ch = value.charCodeAt(i)
    h1 = Math.imul(h1 ^ ch, 2654435761)
    h2 = Math.imul(h2 ^ ch, 1597334677)
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507)
  h1 ^= Math.imul(h2 ^ (h2 >>> 13), 3266489909)
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507)
  h2 ^= Math.imul(h1 ^ (h1 >>> 13), 3266489909)
  return base36((h2 & HASH_BITS_HIGH) * 0x1_0000_0000 + (h1 >>> 0))
}

const BASE36_DIGITS = '0123456789abcdefghijklmnopqrstuvwxyz'

/**
 * `n.toString(36).padStart(9, '0')` for an integer 0 ≤ n < 2^46 (exact in a double, so each step's
 * division and remainder are exact), at a seventh of the cost: V8 converts a number above 2^31 to
 * base 36 through its general floating-point routine, ~0.7 µs, and every message's muid takes one.
 */
function base36(n: number): string {
  let s = ''
  for (let i = 0; i < ID_HASH_LENGTH; i++) {
    const q = Math.floor(n / 36)
    s = BASE36_DIGITS[n - q * 36] + s
    n = q
  }
  return s
}

/** True when the platform would take `id` unchanged (the import schemas' own check). */
export { isPlatformId }

function cleaned(legacyId: string): string {
  return legacyId.toLowerCase().replace(/[^a-z0-9_-]/g, '_')
}

/**
 * The platform id of a legacy id: deterministic, lowercase alpha-dash, 1–100 characters, safe for
 * any input (non-ASCII, empty, very long). Already-valid ids are returned unchanged.
 */
export function toPlatformId(legacyId: string): string {
  if (isPlatformId(legacyId)) {
    return legacyId
  }
  return `${cleaned(legacyId).slice(0, ID_PREFIX_MAX)}_${stableHash(legacyId)}`
}

/**
 * The `n`-th alternative (n ≥ 1) for a legacy id whose candidate was taken: the cleaned prefix plus
 * a hash of the original id salted with `n`. Deterministic, so the same claim order gives the same
 * ids on every machine.
 */
export function alternativeId(legacyId: string, n: number): string {
  return `${cleaned(legacyId).slice(0, ID_PREFIX_MAX)}_${stableHash(`${legacyId}\u0001${n}`)}`
}

/**
 * The legacy-id → platform-id map of a run. The mappings claim ids through it; the ledger persists
 * {@link IdRegistry.entries} (or the new ones, {@link IdRegistry.takeNew}) in its `id_map` table and
 * {@link IdRegistry.load}s them back at the start of the next run.
 */
export interface IdRegistry {
  /** The platform id already decided for `legacyId`, if any. */
  get(kind: IdKind, legacyId: string): string | undefined
  /** The legacy id that holds `platformId`, if any. */
  holder(kind: IdKind, platformId: string): string | undefined
  /**
   * The platform id of `legacyId`: the one decided before if there is one; otherwise `candidate`
   * (default {@link toPlatformId}) when no other legacy id holds it; otherwise the first free
   * {@link alternativeId}. The decision is recorded.
   */
  claim(kind: IdKind, legacyId: string, candidate?: string): string
  /** Every decision, in claim order. */
  entries(): IdMapEntry[]
  /** Decisions made since the last call (or since creation/load), for incremental persistence. */
  takeNew(): IdMapEntry[]
  /**
   * Restores persisted decisions. Throws when they contradict each other or the registry (one
   * platform id held by two legacy ids): that is a corrupted id map, not a legacy-data problem.
   */
  load(entries: Iterable<IdMapEntry>): void
}

/** An in-memory {@link IdRegistry}. */
export class MemoryIdRegistry implements IdRegistry {
  readonly #byLegacy = new Map<string, string>()
  readonly #byPlatform = new Map<string, string>()
  readonly #entries: IdMapEntry[] = []
  #fresh: IdMapEntry[] = []

  constructor(entries: Iterable<IdMapEntry> = []) {
    this.load(entries)
  }

  get(kind: IdKind, legacyId: string): string | undefined {
    return this.#byLegacy.get(`${kind}\u0000${legacyId}`)
  }

  holder(kind: IdKind, platformId: string): string | undefined {
    return this.#byPlatform.get(`${kind}\u0000${platformId}`)
  }

  claim(kind: IdKind, legacyId: string, candidate: string = toPlatformId(legacyId)): string {
    const known = this.get(kind, legacyId)
    if (known !== undefined) {
      return known
    }
    let id = candidate
    for (let n = 1; this.holder(kind, id) !== undefined || !isPlatformId(id); n++) {
      id = alternativeId(legacyId, n)
    }
    const entry = { kind, legacyId, platformId: id }
    this.#record(entry)
    this.#fresh.push(entry)
    return id
  }

  entries(): IdMapEntry[] {
    return [...this.#entries]
  }

  takeNew(): IdMapEntry[] {
    const fresh = this.#fresh
    this.#fresh = []
    return fresh
  }

  load(entries: Iterable<IdMapEntry>): void {
    for (const e of entries) {
      const known = this.get(e.kind, e.legacyId)
      if (known === e.platformId) {
        continue
      }
      if (known !== undefined) {
        throw new Error(`id map: ${e.kind} ${JSON.stringify(e.legacyId)} is both ${known} and ${e.platformId}`)
      }
      const holder = this.holder(e.kind, e.platformId)
      if (holder !== undefined) {
        throw new Error(`id map: ${e.kind} ${e.platformId} is held by both ${JSON.stringify(holder)} and ${JSON.stringify(e.legacyId)}`)
      }
      if (!isPlatformId(e.platformId)) {
        throw new Error(`id map: ${JSON.stringify(e.platformId)} is not a valid platform id`)
      }
      this.#record({ kind: e.kind, legacyId: e.legacyId, platformId: e.platformId })
    }
  }

  #record(entry: IdMapEntry): void {
    this.#byLegacy.set(`${entry.kind}\u0000${entry.legacyId}`, entry.platformId)
    this.#byPlatform.set(`${entry.kind}\u0000${entry.platformId}`, entry.legacyId)
    this.#entries.push(entry)
  }
}

/** The muid of a legacy message. Messages do not go through the registry (there are millions). */
export function messageMuid(legacyMessageId: string): string {
  return toPlatformId(legacyMessageId)
}

/** The muid of part `n` (n ≥ 2) of a split message: `<muid>-p<n>`, hashed if over 100 characters. */
export function partMuid(muid: string, n: number): string {
  return toPlatformId(`${muid}-p${n}`)
}
