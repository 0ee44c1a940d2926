/**
 * The state the end-to-end oracle keeps while it walks a fixture's canonical records (what is
 * planned so far, what was skipped or rejected, the facts stated), and the documented value rules
 * the entities share: timestamps in seconds, names, invalid characters, tags, metadata.
 * Sources: mappings/README.md and docs/configuration.md; never mappings/ code.
 */
import type { LegacyEntity } from '../../src/model/index.ts'
import type { ExpectedItems, ItemFacts } from './expected-facts.ts'
import { state } from './expected-facts.ts'
import { alternativeIdOf, platformIdOf } from './expected-ids.ts'
import type { OraclePolicies } from './expected-policies.ts'

/**
 * What a later record finds when it refers to a legacy user, group or message: planned, skipped by
 * a policy, or rejected — its source row or its mapping; the README rejects what refers to either
 * naming that reject (mappings/README.md `missingUsers`).
 */
export type Ref<T> = T | { readonly skipped: string } | { readonly rejected: string }

export interface PlannedUserRef {
  readonly uid: string
  readonly name: string
}
export interface PlannedGroupRef {
  readonly guid: string
  /** Seconds; undefined when the record had none (planning derives one the oracle does not know). */
  readonly createdAt: number | undefined
  /** The owner's legacy id, when the owner is a planned user. */
  readonly ownerId: string | undefined
}
export interface PlannedMessageRef {
  readonly muid: string
  readonly senderName: string
  /** Whether it has words to quote. */
  readonly hasText: boolean
}

export interface World {
  readonly policies: OraclePolicies
  /** The run's clock, epoch ms (the test's time before the run: the run's own is a little later). */
  readonly now: number
  readonly users: Map<string, Ref<PlannedUserRef>>
  readonly groups: Map<string, Ref<PlannedGroupRef>>
  readonly messages: Map<string, Ref<PlannedMessageRef>>
  /** Legacy usernames of planned users, lowercase (`mentions: rewrite` resolves `@username`). */
  readonly usernames: Set<string>
  /** Platform ids taken, per entity → the legacy id holding it. */
  readonly taken: { readonly users: Map<string, string>; readonly groups: Map<string, string> }
  readonly items: ExpectedItems
  readonly legacyOfKey: Map<string, string>
  readonly rejects: Map<string, { entity: LegacyEntity; legacyId: string; field: string }>
  readonly skipped: Map<string, string>
}

export const isPlanned = <T extends object>(r: Ref<T> | undefined): r is T => r !== undefined && !('skipped' in r) && !('rejected' in r)

/** A record's fate when it yields no item: skipped by a policy, or rejected naming a field. */
export type Decided = { readonly skip: string } | { readonly reject: string }
export type Outcome<T> = T | Decided
export const decided = <T extends object>(o: Outcome<T>): o is Decided => 'skip' in o || 'reject' in o

export function reject(w: World, entity: LegacyEntity, legacyId: string, field: string): void {
  w.rejects.set(`${entity} ${legacyId}`, { entity, legacyId, field })
}

export function skip(w: World, entity: LegacyEntity, legacyId: string, policy: string): void {
  w.skipped.set(`${entity} ${legacyId}`, policy)
}

/** Records an item's facts under its key, and the legacy id it comes from. */
export function expectItem(w: World, entity: LegacyEntity, key: string, legacyId: string, facts: ItemFacts): void {
  w.items[entity].set(key, facts)
  w.legacyOfKey.set(`${entity} ${key}`, legacyId)
}

/** The platform id of a user or group: the id rule's, or, when another legacy id holds that, the first free alternative. */
export function claim(w: World, entity: 'users' | 'groups', legacyId: string): string {
  const taken = w.taken[entity]
  let id = platformIdOf(legacyId)
  for (let n = 1; taken.has(id) && taken.get(id) !== legacyId; n++) {
    id = alternativeIdOf(legacyId, n)
  }
  taken.set(id, legacyId)
  return id
}

// ─── values ─────────────────────────────────────────────────────────────────────────────────────

const MAX_SECONDS = 9_999_999_999

/** Epoch ms → the platform's seconds, when valid (a number, not negative, at most 10 digits of seconds). */
export function seconds(ms: unknown): number | undefined {
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) {
    return undefined
  }
  const s = Math.floor(ms / 1000)
  return s <= MAX_SECONDS ? s : undefined
}

/** U+0000 and unpaired surrogates (`text.invalidCharacters`). */
// eslint-disable-next-line no-control-regex -- U+0000 is the character this finds
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g

export const hasUnstorable = (s: string) => new RegExp(UNSTORABLE.source).test(s)

/** `text.invalidCharacters: strip` over every string of a value, keys included. */
export function stripped<T>(v: T): T {
  if (typeof v === 'string') {
    return v.replace(UNSTORABLE, '') as T
  }
  if (Array.isArray(v)) {
    return v.map(stripped) as T
  }
  if (v !== null && typeof v === 'object') {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [stripped(k), stripped(x)])) as T
  }
  return v
}

/**
 * A name as documented: trimmed, cut to 100 characters; empty → undefined (rejected). A name cut
 * inside non-ASCII text ("never inside a character or emoji") is stated by its first 90 characters only.
 */
export function nameFacts(facts: ItemFacts, raw: unknown): boolean {
  const name = typeof raw === 'string' ? raw.trim() : ''
  if (name === '') {
    return false
  }
  if (name.length <= 100) {
    state(facts, ['name'], { eq: name })
  } else {
    state(facts, ['name'], { startsWith: name.slice(0, 90), endsWith: '' })
  }
  return true
}

/** Tags (`fieldLimits: fix`: de-duplicated, each cut to 100, at most 25) with the policies' own tag after them. */
export function tagsOf(recordTags: readonly string[] | undefined, added: readonly string[]): string[] {
  return [...new Set([...(recordTags ?? []).map((t) => t.slice(0, 100)), ...added])].slice(0, 25)
}

/** Bytes of a value's JSON. */
export const jsonBytes = (v: unknown) => Buffer.byteLength(JSON.stringify(v) ?? '', 'utf8')

/**
 * Metadata as documented: the record's own keys kept, chatferry's facts under `legacy`
 * (`legacyMetadata.key`), `legacy.id` the legacy id (`legacyMetadata.ids: true`), plus the
 * top-level keys a policy documents (`email`, `description`). Stated key by key; the rest of
 * `legacy` only where a policy names its key (`facts` of the caller). Over 4 KB: not stated
 * (`fieldLimits` may drop the legacy part at 5 KB).
 */
export function metadataFacts(
  facts: ItemFacts,
  at: readonly string[],
  own: Record<string, unknown> | undefined,
  documented: Record<string, unknown>,
  legacy: Record<string, unknown>,
): void {
  const top = { ...(own ?? {}), ...documented }
  if (jsonBytes({ ...top, legacy }) > 4096 || 'legacy' in top || Object.keys(documented).some((k) => own !== undefined && k in own)) {
    return
  }
  state(facts, at, { keys: [...Object.keys(top), 'legacy'] })
  for (const [k, v] of Object.entries(top)) {
    state(facts, [...at, k], { eq: v })
  }
  for (const [k, v] of Object.entries(legacy)) {
    state(facts, [...at, 'legacy', k], { eq: v })
  }
}
