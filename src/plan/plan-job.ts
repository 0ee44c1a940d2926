/**
 * Extract → map → validate → plan: reads every entity of a legacy source in one snapshot, maps
 * each record with the configured policies, and writes the outcome of every record into the ledger
 * (planned items, skips with their policy, rejects with their field and reason), page by page,
 * with the entity's cursor saved in the same transaction as its page. A crash loses at most the
 * page in hand; the next run resumes from the cursor.
 */
import type { Logger } from 'pino'
import {
  MemoryIdRegistry,
  mapRecord,
  tallyOutcomes,
  type AdjustFn,
  type IdKind,
  type MappedItem,
  type MappingContext,
  type OutcomeCounts,
  type PlannedGroup,
  type PlannedMessage,
  type PlannedUser,
  type Policies,
  type SkippedRef,
} from '../../mappings/index.ts'
import { LEGACY_ENTITIES, legacyIdOf, type LegacyEntity, type LegacyMessage, type LegacyRecordOf } from '../model/index.ts'
import type { Cursor, SourceSession } from '../model/connector.ts'
import type { LedgerStore, PlanCounts, PlannedItem, RejectedItem, SkippedItem } from '../state/index.ts'
import type { GroupImport, MessageImport, UserImport } from '../target/schemas.ts'
import { loadGroups, loadMessages, loadUsers, plannedGroup, plannedMessage, skipReason } from './lookups.ts'

/** Rows per source page. @default 1000 */
export const DEFAULT_PAGE_SIZE = 1000
/** Sample legacy ids kept per reject reason in a summary. */
export const SAMPLES_PER_REASON = 5

export interface PlanJobOptions {
  readonly jobId: string
  readonly store: LedgerStore
  readonly session: SourceSession
  readonly policies: Policies
  readonly adjust?: AdjustFn
  /** The run's clock, epoch ms (retention and joinedAt are judged against it). */
  readonly now: number
  /** @default 1000 */
  readonly pageSize?: number
  /**
   * `full`: resume each entity from its cursor, skip entities whose read completed.
   * `delta`: read only rows changed since each entity's watermark (after a completed full read).
   * @default 'full'
   */
  readonly mode?: 'full' | 'delta'
  readonly signal?: AbortSignal
  readonly logger?: Logger
  /** Called after every page, for progress lines. */
  readonly onPage?: (entity: LegacyEntity, summary: EntityPlanSummary) => void
}

export interface ReasonCount {
  count: number
  /** Up to {@link SAMPLES_PER_REASON} legacy ids. */
  samples: string[]
}

export interface EntityPlanSummary {
  /** Source rows read in this run (problems included). */
  sourceRows: number
  /** What the ledger did with the mapped items (new, updated, unchanged, loaded-but-changed). */
  ledger: PlanCounts
  /** Skipped by policy: `policy → reason → count`. */
  skipped: Record<string, ReasonCount>
  /** Rejected (unreadable row or unmappable record): `reason → count + samples`. */
  rejected: Record<string, ReasonCount>
  /** Extra items planned for this entity's records (placeholders, the system user), by reason. */
  extras: Record<string, number>
  /** True when the entity's read had already completed and was not repeated. */
  alreadyRead: boolean
}

export interface PlanJobSummary {
  readonly snapshotAt: number
  readonly entities: Record<LegacyEntity, EntityPlanSummary>
  readonly outcomes: OutcomeCounts
}

/** The cursor of an entity whose read finished: `{…last key, complete: 1}`. */
function isComplete(cursor: unknown): boolean {
  return typeof cursor === 'object' && cursor !== null && (cursor as { complete?: unknown }).complete === 1
}

function emptyCounts(): PlanCounts {
  return { inserted: 0, updated: 0, unchanged: 0, loadedButChanged: 0, replanned: 0, skipped: 0, rejected: 0, duplicates: 0 }
}

function emptySummary(): EntityPlanSummary {
  return { sourceRows: 0, ledger: emptyCounts(), skipped: {}, rejected: {}, extras: {}, alreadyRead: false }
}

function addCounts(into: PlanCounts, from: PlanCounts): void {
  for (const k of Object.keys(into) as (keyof PlanCounts)[]) into[k] += from[k]
}

function note(map: Record<string, ReasonCount>, reason: string, legacyId: string): void {
  const entry = (map[reason] ??= { count: 0, samples: [] })
  entry.count++
  if (entry.samples.length < SAMPLES_PER_REASON) entry.samples.push(legacyId)
}

function sortKeyOf(entity: LegacyEntity, item: MappedItem): number {
  // Messages drain oldest first; the ledger's id breaks ties, which keeps split parts in order.
  return entity === 'messages' ? (item.payload as MessageImport).sentAt : 0
}

export async function planJob(options: PlanJobOptions): Promise<PlanJobSummary> {
  const { jobId, store, session, policies, signal, logger } = options
  const pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE
  const mode = options.mode ?? 'full'
  const metadataKey = policies.legacyMetadata.key

  const ids = new MemoryIdRegistry()
  ids.load(await loadIdMap(store, jobId))
  const users = await loadUsers(store, jobId, metadataKey)
  const groups = await loadGroups(store, jobId)
  const names = new Map<string, string>()
  for (const u of users.values()) if (!('skipped' in u)) names.set(u.uid, u.name)
  const nameOfUid = (uid: string) => names.get(uid)
  // Thread parents of the page in hand; replies on the same page find their parent here too.
  let pageMessages = new Map<string, PlannedMessage | SkippedRef>()
  const outcomes: OutcomeCounts = {}
  const entities = Object.fromEntries(LEGACY_ENTITIES.map((e) => [e, emptySummary()])) as Record<LegacyEntity, EntityPlanSummary>
  const plannedExtras = new Set<string>()

  for (const entity of LEGACY_ENTITIES) {
    const summary = entities[entity]
    const state = await store.getCursor(jobId, entity)
    if (mode === 'full' && isComplete(state?.cursor)) {
      summary.alreadyRead = true
      continue
    }
    if (mode === 'delta' && !isComplete(state?.cursor)) {
      throw new Error(`a delta run needs a completed full read of ${entity} first: run \`chatferry run\` to the end once`)
    }
    const since = mode === 'delta' && typeof state?.watermark === 'number' ? state.watermark : undefined
    const after = mode === 'full' && state?.cursor ? (state.cursor as Cursor) : undefined
    let lastCursor: Cursor | undefined = after
    let watermark = typeof state?.watermark === 'number' ? state.watermark : undefined

    for await (const page of session.read(entity, {
      pageSize,
      ...(after ? { after } : {}),
      ...(since !== undefined ? { since } : {}),
      ...(signal ? { signal } : {}),
    })) {
      signal?.throwIfAborted()
      summary.sourceRows += page.rows.length
      pageMessages = entity === 'messages' ? await parentsOf(page.rows, store, jobId, nameOfUid) : new Map()
      const ctx: MappingContext = {
        now: options.now,
        policies,
        ids,
        user: (id) => users.get(id),
        group: (id) => groups.get(id),
        message: (id) => pageMessages.get(id),
        ...(options.adjust ? { adjust: options.adjust } : {}),
      }
      const items: PlannedItem[] = []
      const extras: PlannedItem[] = []
      const skips: SkippedItem[] = []
      const rejects: RejectedItem[] = []
      for (const row of page.rows) {
        if (!row.ok) {
          const reason = `unreadable ${row.field}`
          note(summary.rejected, reason, row.legacyId)
          rejects.push({ legacyId: row.legacyId, code: 'SOURCE_ROW_INVALID', message: `${row.field}: ${row.reason}` })
          continue
        }
        const record = row.record as LegacyRecordOf[typeof entity]
        const legacyId = legacyIdOf(entity, record)
        const result = mapRecord(entity, record, ctx)
        tallyOutcomes([result], outcomes)
        if (result.kind === 'rejected') {
          note(summary.rejected, `${result.field}: ${result.policy ? `${result.policy} policy` : 'invalid'}`, legacyId)
          rejects.push({ legacyId, code: 'MAPPING_INVALID', message: `${result.field}: ${result.reason}` })
          remember(entity, record, undefined, { skipped: true, policy: result.policy ?? 'dependencies' })
          continue
        }
        if (result.kind === 'skipped') {
          note(summary.skipped, `${result.policy}: ${result.reason}`, legacyId)
          skips.push({ legacyId, reason: skipReason(result.policy, result.reason) })
          remember(entity, record, undefined, { skipped: true, policy: result.policy })
          continue
        }
        for (const item of result.items) {
          items.push({ legacyId, targetKey: item.targetKey, payload: item.payload, sortKey: sortKeyOf(entity, item) })
        }
        for (const extra of result.extraItems) {
          if (plannedExtras.has(extra.targetKey)) continue
          plannedExtras.add(extra.targetKey)
          const reason = extra.reason ?? 'extra'
          entities.users.extras[reason] = (entities.users.extras[reason] ?? 0) + 1
          extras.push({ legacyId: `~${reason}:${extra.targetKey}`, targetKey: extra.targetKey, payload: extra.payload })
        }
        remember(entity, record, result.items[0], undefined)
      }
      // Id decisions are saved before the page: the cursor must never run ahead of them.
      await saveIdMap(store, jobId, ids)
      if (extras.length > 0) addCounts(entities.users.ledger, await store.planItems(jobId, 'users', extras))
      lastCursor = page.cursor
      if (typeof page.watermark === 'number') watermark = Math.max(watermark ?? 0, page.watermark)
      const counts = await store.planPage(jobId, entity, {
        items,
        skips,
        rejects,
        cursor: { value: page.cursor, ...(watermark !== undefined ? { watermark } : {}) },
      })
      addCounts(summary.ledger, counts)
      options.onPage?.(entity, summary)
    }
    // The read is complete: later full runs skip it, delta runs start from its watermark.
    await store.saveCursor(jobId, entity, { ...(lastCursor ?? {}), complete: 1 }, watermark ?? session.snapshotAt)
    logger?.info({ entity, rows: summary.sourceRows, ledger: summary.ledger }, `planned ${entity}`)
  }
  return { snapshotAt: session.snapshotAt, entities, outcomes }

  function remember(
    entity: LegacyEntity,
    record: LegacyRecordOf[LegacyEntity],
    item: MappedItem | undefined,
    skip: SkippedRef | undefined,
  ): void {
    if (entity === 'users') {
      const id = (record as LegacyRecordOf['users']).id
      if (skip) users.set(id, skip)
      else if (item) {
        const u = item.payload as UserImport
        const username = (record as LegacyRecordOf['users']).username
        const planned: PlannedUser = {
          uid: u.uid,
          name: u.name,
          ...(u.avatar !== undefined ? { avatar: u.avatar } : {}),
          ...(username !== undefined ? { username } : {}),
        }
        users.set(id, planned)
        names.set(planned.uid, planned.name)
      }
    } else if (entity === 'groups') {
      const id = (record as LegacyRecordOf['groups']).id
      if (skip) groups.set(id, skip)
      else if (item) groups.set(id, plannedGroup(item.payload as GroupImport))
    } else if (entity === 'messages') {
      const id = (record as LegacyMessage).id
      if (skip) pageMessages.set(id, skip)
      else if (item) pageMessages.set(id, plannedMessage(item.payload as MessageImport, nameOfUid))
    }
  }
}

/** Thread parents of a page that were planned on earlier pages: one ledger query. */
async function parentsOf(
  rows: readonly { ok: boolean }[],
  store: LedgerStore,
  jobId: string,
  nameOfUid: (uid: string) => string | undefined,
): Promise<Map<string, PlannedMessage | SkippedRef>> {
  const parentIds = new Set<string>()
  for (const r of rows) {
    const parent = r.ok ? (r as unknown as { record: LegacyMessage }).record.threadParentId : undefined
    if (parent !== undefined) parentIds.add(parent)
  }
  return loadMessages(store, jobId, [...parentIds], nameOfUid)
}

async function loadIdMap(store: LedgerStore, jobId: string): Promise<{ kind: IdKind; legacyId: string; platformId: string }[]> {
  const rows = await store.db
    .selectFrom('chatferry.id_map')
    .select(['kind', 'legacy_id', 'platform_id'])
    .where('job_id', '=', jobId)
    .orderBy('created_at')
    .execute()
  return rows.map((r) => ({ kind: r.kind as IdKind, legacyId: r.legacy_id, platformId: r.platform_id }))
}

async function saveIdMap(store: LedgerStore, jobId: string, ids: MemoryIdRegistry): Promise<void> {
  const fresh = ids.takeNew()
  for (const kind of ['user', 'group'] as const) {
    const mine = fresh.filter((e) => e.kind === kind)
    if (mine.length === 0) continue
    const conflicts = await store.saveIdMappings(jobId, kind, mine)
    if (conflicts.length > 0) {
      const c = conflicts[0]
      throw new Error(
        `the id map of job ${jobId} changed under this run (${kind} ${c?.legacyId} → ${c?.platformId}); is another planner running on the same job?`,
      )
    }
  }
}
