/**
 * `run --delta --final`, the cutover's last read: it may start only when the bulk load has nothing
 * left to do ({@link finalDeltaBlockers}), and after it has loaded it asks the legacy database, in a
 * fresh snapshot, how many rows changed since its read began ({@link sourceChangesSince}): any
 * means the legacy system is still being written and the cutover is not safe yet
 * ({@link describeSourceChanges}).
 */
import { LEGACY_ENTITIES, type LegacyEntity } from '../model/records.ts'
import { isComplete } from '../plan/read-window.ts'
import type { LedgerStore } from '../state/store.ts'
import type { ResolvedConfig } from './config.ts'
import { openSource } from './open-source.ts'

/** Per entity: rows changed at or after the final read's start; null when the source cannot tell (no change-time column). */
export type SourceChanges = Record<LegacyEntity, number | null>

/** What the final delta records in its run's stats and prints in its `--json` summary. */
export interface CutoverRecord {
  readonly final: true
  /** When the final read's snapshot began, by the source database's clock (ISO 8601): the cutover time. */
  readonly readStartedAt: string
  /** When the source was asked for later changes (ISO 8601); absent until it was. */
  readonly checkedAt?: string
  readonly changedAfterRead?: SourceChanges
  /** Rows changed after the read began, all entities: > 0 means freeze the source and run the final delta again. */
  readonly changedRows?: number
  readonly sourceStillChanging?: boolean
  /** The quiet period the operator asked for (`--quiet-period`), in ms: the source was checked again after it. */
  readonly quietPeriodMs?: number
  /** How long the source was seen unchanged: from the read's start to the last check, in ms. */
  readonly quietForMs?: number
}

const n = (v: number) => v.toLocaleString('en-US')

/**
 * Why the final delta cannot start yet, each with what to run; empty when it can. Reads the
 * ledger only: each entity's cursor (its full read must have completed) and the load's open work.
 */
export async function finalDeltaBlockers(store: LedgerStore, jobId: string): Promise<string[]> {
  const unread: LegacyEntity[] = []
  for (const entity of LEGACY_ENTITIES) {
    if (!isComplete((await store.getCursor(jobId, entity))?.cursor)) {
      unread.push(entity)
    }
  }
  const open = new Map<string, string[]>()
  for (const row of await store.statusLookups.openWork(jobId)) {
    const what = row.status === 'open' ? `${n(row.n)} open batch${row.n === 1 ? '' : 'es'}` : `${n(row.n)} ${row.status}`
    open.set(row.entity, [...(open.get(row.entity) ?? []), what])
  }
  const problems: string[] = []
  if (unread.length > 0) {
    problems.push(`the full read of ${unread.join(', ')} never completed: run \`chatferry run\` until it exits 0 or 3`)
  }
  if (open.size > 0) {
    const detail = [...open].map(([entity, parts]) => `${entity} ${parts.join(', ')}`).join('; ')
    problems.push(`the load still has work (${detail}): run \`chatferry load\` until it exits 0 or 3`)
  }
  return problems
}

/** The refusal's message: every blocker, then how to go on. */
export function describeBlockers(problems: readonly string[]): string {
  return (
    `run --delta --final refuses to start while the bulk load still has work: ${problems.join('; ')}; ` +
    'then run `chatferry run --delta --final` again'
  )
}

/**
 * Per entity, rows of the source changed at or after `since` (epoch ms), in a snapshot opened now
 * (one `countChangedSince` query per entity; null where the connector or the entity has no
 * change-time column).
 */
export async function sourceChangesSince(config: Pick<ResolvedConfig, 'file' | 'source' | 'policies'>, since: number): Promise<SourceChanges> {
  const source = await openSource(config, 'check the source for changes after the final read')
  return source.read(async (session) => {
    const out = {} as Record<LegacyEntity, number | null>
    for (const entity of LEGACY_ENTITIES) {
      out[entity] = session.countChangedSince ? ((await session.countChangedSince(entity, since)) ?? null) : null
    }
    return out
  })
}

const SINGULAR: Record<LegacyEntity, string> = { users: 'user', groups: 'group', members: 'member', messages: 'message' }

/** `12 messages, 1 user` (entities with changes only, in load order). */
function countsText(changes: SourceChanges): string {
  return LEGACY_ENTITIES.filter((e) => (changes[e] ?? 0) > 0)
    .map((e) => `${n(changes[e] ?? 0)} ${changes[e] === 1 ? SINGULAR[e] : e}`)
    .join(', ')
}

/** The cutover record when the final read has begun (before the source was checked). */
export function cutoverStarted(readStartedAt: number): CutoverRecord {
  return { final: true, readStartedAt: new Date(readStartedAt).toISOString() }
}

/** The cutover record once the source was checked. */
export function cutoverChecked(
  readStartedAt: number,
  changes: SourceChanges,
  checkedAt: number,
  quiet: { periodMs?: number; forMs?: number } = {},
): CutoverRecord {
  const changedRows = LEGACY_ENTITIES.reduce((a, e) => a + (changes[e] ?? 0), 0)
  return {
    final: true,
    readStartedAt: new Date(readStartedAt).toISOString(),
    checkedAt: new Date(checkedAt).toISOString(),
    changedAfterRead: changes,
    changedRows,
    sourceStillChanging: changedRows > 0,
    ...(quiet.periodMs !== undefined ? { quietPeriodMs: quiet.periodMs } : {}),
    ...(quiet.forMs !== undefined ? { quietForMs: quiet.forMs } : {}),
  }
}

/**
 * The warning when the source changed after the final read began, else undefined; a second
 * sentence names the entities whose changes nothing can tell (no change-time column).
 */
export function describeSourceChanges(record: CutoverRecord): { warning?: string; unknown?: string } {
  const changes = record.changedAfterRead
  if (changes === undefined) {
    return {}
  }
  const unknownEntities = LEGACY_ENTITIES.filter((e) => changes[e] === null)
  const unknown =
    unknownEntities.length > 0
      ? `cannot tell whether ${unknownEntities.join(', ')} changed after the final read: their source queries return no change-time column (updated_at)`
      : undefined
  const warning = record.sourceStillChanging
    ? `the source is still being written: ${countsText(changes)} changed after the final read began at ${record.readStartedAt}; ` +
      'freeze the legacy system and run `chatferry run --delta --final` again'
    : undefined
  return { ...(warning ? { warning } : {}), ...(unknown ? { unknown } : {}) }
}
