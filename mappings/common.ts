/**
 * Helpers shared by the four mappings. @internal
 */
import type { JsonObject, LegacyRecordOf } from '../src/model/index.ts'
import { isCanonicalMemberImport } from '../src/target/member-import-check.ts'
import { isCanonicalMessageImport } from '../src/target/message-import-check.ts'
import { type Entity, IMPORT_ITEM_SCHEMAS, type ImportItemOf, importKey, jsonBytes, LIMITS } from '../src/target/schemas.ts'
import type { PolicyName } from './policies.ts'
import type { MappedItem, MappingContext, MapResult, PolicyOutcome } from './types.ts'

/** Thrown inside a mapping and turned into a `rejected` result by {@link guard}; never escapes. */
export class Rejection {
  readonly field: string
  readonly reason: string
  readonly policy: PolicyName | undefined
  constructor(field: string, reason: string, policy?: PolicyName) {
    this.field = field
    this.reason = reason
    this.policy = policy
  }
}

/** Thrown inside a mapping and turned into a `skipped` result by {@link guard}. */
export class Skip {
  readonly policy: PolicyName
  readonly outcome: string
  readonly reason: string
  constructor(policy: PolicyName, outcome: string, reason: string) {
    this.policy = policy
    this.outcome = outcome
    this.reason = reason
  }
}

/** Collects the outcomes of one record. */
export class Outcomes {
  readonly list: PolicyOutcome[] = []
  add(policy: PolicyName, outcome: string): void {
    this.list.push({ policy, outcome })
  }
}

/** Runs a mapping body: `Rejection`/`Skip` become results; anything else thrown becomes a rejection. */
export function guard<E extends Entity>(out: Outcomes, body: () => MapResult<E>): MapResult<E> {
  try {
    return body()
  } catch (e) {
    if (e instanceof Rejection) {
      return e.policy === undefined
        ? { kind: 'rejected', field: e.field, reason: e.reason }
        : { kind: 'rejected', field: e.field, reason: e.reason, policy: e.policy }
    }
    if (e instanceof Skip) {
      out.add(e.policy, e.outcome)
      return { kind: 'skipped', policy: e.policy, reason: e.reason, outcomes: out.list }
    }
    return { kind: 'rejected', field: '(mapping)', reason: `unexpected error: ${e instanceof Error ? e.message : String(e)}` }
  }
}

// ─── timestamps ──────────────────────────────────────────────────────────────────────────────────

const MAX_SECONDS = 9_999_999_999

/** Epoch ms → UNIX seconds, or `undefined` when not a valid 10-digit timestamp (NaN, negative, too far). */
export function toSeconds(ms: unknown): number | undefined {
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) {
    return undefined
  }
  const s = Math.floor(ms / 1000)
  return s <= MAX_SECONDS ? s : undefined
}

/** A required timestamp: seconds, or a rejection naming the field. */
export function requiredSeconds(ms: unknown, field: string): number {
  const s = toSeconds(ms)
  if (s === undefined) {
    throw new Rejection(field, `invalid timestamp ${describe(ms)}: expected epoch milliseconds ≥ 0`)
  }
  return s
}

/** An optional timestamp: seconds, absent, or — when invalid — dropped (`fieldLimits: fix`) or rejected. */
export function optionalSeconds(ms: unknown, field: string, ctx: MappingContext, out: Outcomes): number | undefined {
  if (ms === undefined || ms === null) {
    return undefined
  }
  const s = toSeconds(ms)
  if (s !== undefined) {
    return s
  }
  fieldProblem(ctx, out, field, `invalid timestamp ${describe(ms)}`, 'timestamp-dropped')
  return undefined
}

function describe(v: unknown): string {
  return typeof v === 'number' ? String(v) : (JSON.stringify(v) ?? String(v))
}

/** Applies `fieldLimits`: counts `outcome` under `fix`, rejects under `reject`. */
export function fieldProblem(ctx: MappingContext, out: Outcomes, field: string, reason: string, outcome: string): void {
  if (ctx.policies.fieldLimits === 'reject') {
    throw new Rejection(field, reason, 'fieldLimits')
  }
  out.add('fieldLimits', outcome)
}

// ─── text ────────────────────────────────────────────────────────────────────────────────────────

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' })

/** Cuts `text` to at most `max` UTF-16 units without splitting a character or a grapheme. */
export function cutText(text: string, max: number): string {
  if (text.length <= max) {
    return text
  }
  let end = 0
  for (const { segment } of graphemes.segment(text)) {
    if (end + segment.length > max) {
      break
    }
    end += segment.length
  }
  return text.slice(0, end)
}

/** A required name: trimmed, non-empty, cut to 100 (counted under `names`). */
export function requiredName(name: unknown, out: Outcomes, field = 'name'): string {
  if (typeof name !== 'string' || name.trim() === '') {
    throw new Rejection(field, name === null || name === undefined ? 'name is missing' : 'name is empty')
  }
  const trimmed = name.trim()
  const cut = cutText(trimmed, LIMITS.NAME_MAX)
  if (cut !== trimmed) {
    out.add('names', 'truncated')
  }
  return cut
}

// ─── optional fields under limits ────────────────────────────────────────────────────────────────

export function optionalUrl(url: unknown, field: string, ctx: MappingContext, out: Outcomes): string | undefined {
  if (url === undefined || url === null || url === '') {
    return undefined
  }
  if (typeof url !== 'string' || url.length > LIMITS.URL_MAX) {
    fieldProblem(ctx, out, field, `URL is not a string of at most ${LIMITS.URL_MAX} characters`, 'url-dropped')
    return undefined
  }
  return url
}

/** Tags: de-duplicated, empty ones removed, each at most 100, at most 25. */
export function fixTags(tags: readonly unknown[], field: string, ctx: MappingContext, out: Outcomes): string[] | undefined {
  const result: string[] = []
  let trimmed = false
  for (const t of tags) {
    if (typeof t !== 'string' || t.trim() === '') {
      trimmed = true
      continue
    }
    let tag = t
    if (tag.length > LIMITS.TAG_MAX) {
      tag = cutText(tag, LIMITS.TAG_MAX)
      trimmed = true
    }
    if (!result.includes(tag)) {
      result.push(tag)
    }
  }
  if (result.length > LIMITS.TAGS_MAX) {
    result.length = LIMITS.TAGS_MAX
    trimmed = true
  }
  if (trimmed) {
    fieldProblem(ctx, out, field, `tags must be at most ${LIMITS.TAGS_MAX} non-empty strings of at most ${LIMITS.TAG_MAX}`, 'tags-trimmed')
  }
  return result.length > 0 ? result : undefined
}

/**
 * User/group metadata: the legacy metadata plus chatferry's own key; over 5 KB the legacy part is
 * dropped (`fieldLimits: fix`) and only chatferry's key kept.
 */
export function userGroupMetadata(
  legacy: JsonObject | undefined,
  extra: JsonObject,
  own: JsonObject,
  ctx: MappingContext,
  out: Outcomes,
): JsonObject | undefined {
  const key = ctx.policies.legacyMetadata.key
  const withOwn = (base: JsonObject): JsonObject => (Object.keys(own).length > 0 ? { ...base, [key]: own } : base)
  const full = withOwn({ ...(legacy ?? {}), ...extra })
  if (jsonBytes(full) <= LIMITS.METADATA_BYTES_MAX) {
    return Object.keys(full).length > 0 ? full : undefined
  }
  fieldProblem(ctx, out, 'metadata', `metadata is over ${LIMITS.METADATA_BYTES_MAX} bytes`, 'metadata-dropped')
  const reduced = withOwn({})
  return Object.keys(reduced).length > 0 && jsonBytes(reduced) <= LIMITS.METADATA_BYTES_MAX ? reduced : undefined
}

/** Removes keys whose value is `undefined`, so `.strict()` schemas and JSON agree. */
export function compact<T extends object>(o: T): T {
  const r: Record<string, unknown> = {}
  for (const k of Object.keys(o)) {
    const v = (o as Record<string, unknown>)[k]
    if (v !== undefined) {
      r[k] = v
    }
  }
  return r as T
}

// ─── finishing an item ───────────────────────────────────────────────────────────────────────────

/**
 * Validates with the entity's zod schema; a failure is a rejection naming the item's field path. A
 * message or member item that the cheap check passes is taken as it is: the schema would return
 * the same item (`src/target/message-import-check.ts`, `member-import-check.ts`); any other is
 * parsed by the schema.
 */
export function validated<E extends Entity>(entity: E, payload: unknown): ImportItemOf[E] {
  if (entity === 'messages' ? isCanonicalMessageImport(payload) : entity === 'members' && isCanonicalMemberImport(payload)) {
    return payload as ImportItemOf[E]
  }
  const parsed = IMPORT_ITEM_SCHEMAS[entity].safeParse(payload)
  if (parsed.success) {
    return parsed.data as ImportItemOf[E]
  }
  const issue = parsed.error.issues[0]
  const field = issue === undefined || issue.path.length === 0 ? '(item)' : issue.path.map(String).join('.')
  throw new Rejection(field, `invalid ${entity} item: ${issue?.message ?? 'invalid'}`)
}

/**
 * Applies the user module (if any) to a validated item and validates the result again. `null`
 * skips the record; a throw or a non-synchronous result rejects it.
 */
export function adjusted<E extends Entity>(
  entity: E,
  item: ImportItemOf[E],
  record: LegacyRecordOf[E & keyof LegacyRecordOf],
  ctx: MappingContext,
  out: Outcomes,
): ImportItemOf[E] {
  if (ctx.adjust === undefined) {
    return item
  }
  let result: unknown
  try {
    result = (ctx.adjust as (e: Entity, i: unknown, r: unknown) => unknown)(entity, structuredClone(item), record)
  } catch (e) {
    throw new Rejection('(user-module)', `adjust threw: ${e instanceof Error ? e.message : String(e)}`, 'userModule')
  }
  if (result === null) {
    throw new Skip('userModule', 'skipped', 'user-module')
  }
  if (result === undefined) {
    return item
  }
  if (typeof (result as { then?: unknown }).then === 'function') {
    throw new Rejection('(user-module)', 'adjust must be synchronous (it returned a promise)', 'userModule')
  }
  const item2 = validated(entity, result)
  out.add('userModule', 'adjusted')
  return item2
}

/** Builds the final mapped item: validated, adjusted by the user module, keyed. */
export function finish<E extends Entity>(
  entity: E,
  payload: unknown,
  record: LegacyRecordOf[E & keyof LegacyRecordOf],
  ctx: MappingContext,
  out: Outcomes,
  sortKey?: string,
): MappedItem<E> {
  const item = adjusted(entity, validated(entity, payload), record, ctx, out)
  const key = importKey(entity, item)
  return sortKey === undefined ? { entity, targetKey: key, payload: item } : { entity, targetKey: key, payload: item, sortKey }
}

/** Records `ids` outcomes for a claimed id. */
export function noteId(out: Outcomes, legacyId: string, candidate: string, claimed: string): void {
  if (claimed !== candidate) {
    out.add('ids', 'collision-rekeyed')
  } else if (claimed !== legacyId) {
    out.add('ids', 'normalised')
  }
}
