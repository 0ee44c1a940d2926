/**
 * Extract → map → validate → plan: reads every entity of a legacy source in one snapshot, maps
 * each record with the configured policies, and hands the outcome of every record (mapped items,
 * skips with their policy, rejects with their field and reason) to a {@link PlanSink}, page by
 * page.
 *
 * Two sinks share this one loop:
 * - the ledger sink ({@link createLedgerSink}, the default): writes every page into the ledger with
 *   the entity's cursor in the same transaction, so a crash loses at most the page in hand and the
 *   next run resumes from the cursor (`chatferry run`);
 * - the comparing sink of the dry run (`dry-run.ts`, `chatferry plan`): writes no item state, id
 *   decision or cursor, and classifies each mapped item against the ledger instead.
 */
import type { Logger } from 'pino'
import {
  MemoryIdRegistry,
  mapRecord,
  tallyOutcomes,
  type AdjustFn,
  type IdMapEntry,
  type MappedItem,
  type MapResult,
  type MappingContext,
  type OutcomeCounts,
  type PlannedGroup,
  type PlannedMessage,
  type PlannedUser,
  type Policies,
  type SkippedRef,
} from '../../mappings/index.ts'
import { LEGACY_ENTITIES, legacyIdOf, type LegacyEntity, type LegacyMessage, type LegacyRecordOf } from '../model/index.ts'
import type { Cursor, RowProblem, SourceSession } from '../model/connector.ts'
import type { CursorState, LedgerStore, PlanCounts, PlannedItem, RejectedItem, SkippedItem } from '../state/index.ts'
import { emptyCounts } from '../state/index.ts'
import type { GroupImport, MessageImport, UserImport } from '../target/schemas.ts'
import { loadGroups, loadIdMap, loadMessages, loadUsers, plannedGroup, plannedMessage, skipReason } from './lookups.ts'

/** Rows per source page. @default 1000 */
export const DEFAULT_PAGE_SIZE = 1000
/** Sample legacy ids kept per reject reason in a summary. */
export const SAMPLES_PER_REASON = 5
/** Placeholders whose owned messages are counted one by one; the rest are summed under `others`. */
export const PLACEHOLDERS_TRACKED = 1000
const DAY_MS = 86_400_000

/** One page as the loop hands it to a sink. */
export interface SinkPage {
  readonly items: readonly PlannedItem[]
  readonly skips: readonly SkippedItem[]
  readonly rejects: readonly RejectedItem[]
  readonly cursor: Cursor
  readonly watermark: number | undefined
  /** Messages of this page as replies will look them up (thread parents), by legacy id. */
  readonly messages: ReadonlyMap<string, PlannedMessage | SkippedRef>
}

/** Where the planning loop puts its results. */
export interface PlanSink {
  /** True when cursors are honoured and saved (resume); false: every entity is read in full. */
  readonly resumable: boolean
  /** Id decisions made by earlier runs. */
  loadIds(): Promise<IdMapEntry[]>
  /** Persists decisions made since the last call (the dry run keeps them in memory only). */
  saveIds(ids: MemoryIdRegistry): Promise<void>
  /** Users and groups already planned (resume); the dry run starts empty. */
  loadUsers(metadataKey: string): Promise<Map<string, PlannedUser | SkippedRef>>
  loadGroups(): Promise<Map<string, PlannedGroup | SkippedRef>>
  /** Thread parents planned on earlier pages. */
  parents(legacyIds: readonly string[], nameOfUid: (uid: string) => string | undefined): Promise<Map<string, PlannedMessage | SkippedRef>>
  getCursor(entity: LegacyEntity): Promise<CursorState | undefined>
  /** Extra users (placeholders, the system user), each once. */
  writeExtras(items: readonly PlannedItem[]): Promise<PlanCounts>
  writePage(entity: LegacyEntity, page: SinkPage): Promise<PlanCounts>
  /** The read of `entity` is complete. */
  finishEntity(entity: LegacyEntity, cursor: Cursor | undefined, watermark: number): Promise<void>
}

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
  /** Where results go. @default the ledger ({@link createLedgerSink}) */
  readonly sink?: PlanSink
  /**
   * Records changed at or after this time (epoch ms; `updatedAt`, else a message's `sentAt`) are
   * counted with samples in {@link EntityPlanSummary.changedSince} (the previous plan's snapshot).
   */
  readonly changedSince?: number
  /**
   * After each entity read from its beginning, count the source's rows in the same snapshot
   * (`SourceSession.count`) into {@link EntityPlanSummary.sourceCount}, to confirm none was missed.
   */
  readonly countSource?: boolean
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
  /** Source rows read in this run: {@link records} + {@link problems}. */
  sourceRows: number
  /** Rows that became records. */
  records: number
  /** Rows that could not (unreadable, NULL or duplicate key): rejected with their reason. */
  problems: number
  /**
   * `SELECT count(*)` of the entity's query in the same snapshot ({@link PlanJobOptions.countSource});
   * null when not counted. Anything but {@link sourceRows} means rows were missed or read twice.
   */
  sourceCount: number | null
  /** What the sink did with the mapped items (new, updated, unchanged, loaded-but-changed). */
  ledger: PlanCounts
  /** Mapped items (a split message counts each part). */
  items: number
  /** Skipped by policy: `policy: reason → count`. */
  skipped: Record<string, ReasonCount>
  /** Rejected (unreadable row or unmappable record): `reason → count + samples`. */
  rejected: Record<string, ReasonCount>
  /** Extra items planned for this entity's records (placeholders, the system user), by reason. */
  extras: Record<string, number>
  /** Policy outcomes of this entity's records, `policy: outcome → count + samples` (id renames, clamps…). */
  outcomes: Record<string, ReasonCount>
  /** Referential problems: references to unknown users, groups or thread parents. */
  referential: Record<string, ReasonCount>
  /** Records changed at or after {@link PlanJobOptions.changedSince}. */
  changedSince: ReasonCount
  /** True when the entity's read had already completed and was not repeated. */
  alreadyRead: boolean
}

/** Messages of one calendar month (UTC) by their sent time. */
export interface MonthCount {
  /** Readable messages sent in the month. */
  messages: number
  /** Of those, older than the retention window. */
  beyondRetention: number
}

export interface PlaceholderInfo {
  /** The unknown legacy user id. */
  legacyId: string
  /** Messages that reference it (as sender or receiver). */
  messages: number
}

export interface PlanJobSummary {
  readonly snapshotAt: number
  readonly entities: Record<LegacyEntity, EntityPlanSummary>
  readonly outcomes: OutcomeCounts
  /** Messages per month `YYYY-MM` (UTC). */
  readonly months: Record<string, MonthCount>
  /** The start of the retention window (epoch ms) the run judged against. */
  readonly retentionStart: number
  /** Placeholder users by uid (at most {@link PLACEHOLDERS_TRACKED}), and the messages they own. */
  readonly placeholders: Record<string, PlaceholderInfo>
  /** Messages owned by placeholders beyond the tracked ones. */
  readonly placeholderOthers: { placeholders: number; messages: number }
}

/** The cursor of an entity whose read finished: `{…last key, complete: 1}`. */
function isComplete(cursor: unknown): boolean {
  return typeof cursor === 'object' && cursor !== null && (cursor as { complete?: unknown }).complete === 1
}

/** Zero counts. */
function emptySummary(): EntityPlanSummary {
  return {
    sourceRows: 0,
    records: 0,
    problems: 0,
    sourceCount: null,
    ledger: emptyCounts(),
    items: 0,
    skipped: {},
    rejected: {},
    extras: {},
    outcomes: {},
    referential: {},
    changedSince: { count: 0, samples: [] },
    alreadyRead: false,
  }
}

function addCounts(into: PlanCounts, from: PlanCounts): void {
  for (const k of Object.keys(into) as (keyof PlanCounts)[]) into[k] += from[k]
}

/** Counts one occurrence of `reason` with a sample legacy id. */
export function note(map: Record<string, ReasonCount>, reason: string, legacyId: string): void {
  const entry = (map[reason] ??= { count: 0, samples: [] })
  entry.count++
  if (entry.samples.length < SAMPLES_PER_REASON) entry.samples.push(legacyId)
}

function noteOne(entry: ReasonCount, legacyId: string): void {
  entry.count++
  if (entry.samples.length < SAMPLES_PER_REASON) entry.samples.push(legacyId)
}

function sortKeyOf(entity: LegacyEntity, item: MappedItem): number {
  // Messages drain oldest first; the ledger's id breaks ties, which keeps split parts in order.
  return entity === 'messages' ? (item.payload as MessageImport).sentAt : 0
}

function monthOf(ms: number): string {
  const d = new Date(ms)
  return `${d.getUTCFullYear()}-${String(d.getUTCMonth() + 1).padStart(2, '0')}`
}

/** Referential problems named by a mapping result (unknown users, groups, parents). */
function referentialOf(entity: LegacyEntity, result: MapResult, parentSkipped: boolean): string[] {
  if (result.kind === 'rejected') {
    if (!result.reason.startsWith('unknown user') && !result.reason.startsWith('unknown group')) return []
    const what = result.reason.startsWith('unknown user') ? 'user' : 'group'
    if (entity === 'members') return [`member of unknown ${what}`]
    if (entity === 'messages') return [result.field === 'senderId' ? 'message from unknown user' : `message to unknown ${what}`]
    return []
  }
  if (result.kind !== 'items') return []
  const out: string[] = []
  for (const o of result.outcomes) {
    if (o.policy === 'missingUsers' && o.outcome === 'sender-placeholder') out.push('message from unknown user (placeholder)')
    else if (o.policy === 'missingUsers' && o.outcome === 'receiver-placeholder') out.push('message to unknown user (placeholder)')
    else if (o.policy === 'threads' && o.outcome === 'parent-unknown') out.push(parentSkipped ? 'reply to a thread parent skipped by policy' : 'reply to unknown thread parent')
    else if (o.policy === 'groupOwner' && o.outcome === 'unknown-omitted') out.push('group owned by unknown user')
  }
  return out
}

/** The time a record last changed, for "changed since the previous plan". */
function changedAtOf(entity: LegacyEntity, record: LegacyRecordOf[LegacyEntity]): number | undefined {
  const r = record as { updatedAt?: number; sentAt?: number; createdAt?: number; joinedAt?: number }
  if (typeof r.updatedAt === 'number') return r.updatedAt
  if (entity === 'messages' && typeof r.sentAt === 'number') return r.sentAt
  if (entity === 'members' && typeof r.joinedAt === 'number') return r.joinedAt
  return typeof r.createdAt === 'number' ? r.createdAt : undefined
}

export async function planJob(options: PlanJobOptions): Promise<PlanJobSummary> {
  const { jobId, store, session, policies, signal, logger } = options
  const sink = options.sink ?? createLedgerSink(store, jobId)
  const pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE
  const mode = options.mode ?? 'full'
  const metadataKey = policies.legacyMetadata.key
  const retentionStart = options.now - policies.retention.retentionDays * DAY_MS

  const ids = new MemoryIdRegistry()
  ids.load(await sink.loadIds())
  // What the ledger already knew counts as decided: only this run's claims are "new".
  ids.takeNew()
  const users = await sink.loadUsers(metadataKey)
  const groups = await sink.loadGroups()
  const names = new Map<string, string>()
  for (const u of users.values()) if (!('skipped' in u)) names.set(u.uid, u.name)
  const nameOfUid = (uid: string) => names.get(uid)
  // Thread parents of the page in hand; replies on the same page find their parent here too.
  let pageMessages = new Map<string, PlannedMessage | SkippedRef>()
  const outcomes: OutcomeCounts = {}
  const entities = Object.fromEntries(LEGACY_ENTITIES.map((e) => [e, emptySummary()])) as Record<LegacyEntity, EntityPlanSummary>
  const plannedExtras = new Set<string>()
  const months: Record<string, MonthCount> = {}
  const placeholders: Record<string, PlaceholderInfo> = {}
  const placeholderOthers = { placeholders: 0, messages: 0 }
  let tracked = 0

  for (const entity of LEGACY_ENTITIES) {
    const summary = entities[entity]
    const state = sink.resumable ? await sink.getCursor(entity) : undefined
    if (mode === 'full' && isComplete(state?.cursor)) {
      summary.alreadyRead = true
      continue
    }
    if (mode === 'delta' && !isComplete(state?.cursor)) {
      throw new Error(`a delta run needs a completed full read of ${entity} first: run \`chatferry run\` to the end once`)
    }
    // A delta read in progress (interrupted) keeps `complete: 1` and records where it started
    // (`delta: <since>`) beside its key: the next delta run resumes it from that key and time.
    const saved = (state?.cursor ?? undefined) as (Cursor & { complete?: unknown; delta?: unknown }) | undefined
    const resumingDelta = mode === 'delta' && typeof saved?.delta === 'number'
    const since =
      mode !== 'delta' ? undefined : resumingDelta ? (saved?.delta as number) : typeof state?.watermark === 'number' ? state.watermark : undefined
    const after = mode === 'full' && saved ? (saved as Cursor) : resumingDelta && saved ? keyOf(saved) : undefined
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
      pageMessages = entity === 'messages' ? await parentsOf(page.rows, sink, nameOfUid) : new Map()
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
      const thisPage = new Map<string, PlannedMessage | SkippedRef>()
      const pageKeys = new Map<string, string>()
      for (const row of page.rows) {
        if (!row.ok) {
          summary.problems++
          note(summary.rejected, problemReason(row), row.legacyId)
          if (row.reason.startsWith('unknown ')) note(summary.referential, `${entity === 'messages' ? 'message' : entity} with ${row.reason.replace(/ \S+$/, '')}`, row.legacyId)
          rejects.push({ legacyId: row.legacyId, targetKey: problemKey(row), code: 'SOURCE_ROW_INVALID', message: `${row.field}: ${row.reason}` })
          continue
        }
        summary.records++
        const record = row.record as LegacyRecordOf[typeof entity]
        const legacyId = legacyIdOf(entity, record)
        if (options.changedSince !== undefined) {
          const at = changedAtOf(entity, record)
          if (at !== undefined && at >= options.changedSince) noteOne(summary.changedSince, legacyId)
        }
        if (entity === 'messages') {
          const sentAt = (record as LegacyMessage).sentAt
          if (typeof sentAt === 'number' && Number.isFinite(sentAt)) {
            const m = (months[monthOf(sentAt)] ??= { messages: 0, beyondRetention: 0 })
            m.messages++
            if (sentAt < retentionStart) m.beyondRetention++
          }
        }
        const result = mapRecord(entity, record, ctx)
        tallyOutcomes([result], outcomes)
        const parentId = entity === 'messages' ? (record as LegacyMessage).threadParentId : undefined
        const parentSkipped = parentId !== undefined && parentId !== null && 'skipped' in (pageMessages.get(parentId) ?? {})
        for (const r of referentialOf(entity, result, parentSkipped)) note(summary.referential, r, legacyId)
        if (result.kind === 'rejected') {
          note(summary.rejected, `${result.field}: ${result.policy ? `${result.policy} policy` : 'invalid'}`, legacyId)
          rejects.push({ legacyId, code: 'MAPPING_INVALID', message: `${result.field}: ${result.reason}` })
          remember(entity, record, undefined, { skipped: true, policy: result.policy ?? 'dependencies' })
          continue
        }
        for (const o of result.outcomes) note(summary.outcomes, `${o.policy}: ${o.outcome}`, legacyId)
        if (result.kind === 'skipped') {
          note(summary.skipped, `${result.policy}: ${result.reason}`, legacyId)
          skips.push({ legacyId, reason: skipReason(result.policy, result.reason) })
          remember(entity, record, undefined, { skipped: true, policy: result.policy })
          continue
        }
        const twin = targetKeyTwin(result.items, legacyId, pageKeys)
        if (twin !== undefined) {
          note(summary.rejected, 'targetKey: duplicate target key', legacyId)
          rejects.push({
            legacyId,
            targetKey: `~legacy:${legacyId}#duplicate-of:${twin.legacyId}`,
            code: 'DUPLICATE_TARGET_KEY',
            message: `targetKey: legacy rows ${twin.legacyId} and ${legacyId} both map to ${twin.targetKey}; the first (${twin.legacyId}) is kept`,
          })
          continue
        }
        for (const item of result.items) {
          pageKeys.set(item.targetKey, legacyId)
          items.push({ legacyId, targetKey: item.targetKey, payload: item.payload, sortKey: sortKeyOf(entity, item) })
        }
        summary.items += result.items.length
        for (const extra of result.extraItems) {
          const reason = extra.reason ?? 'extra'
          if (reason === 'placeholder') {
            const known = placeholders[extra.targetKey]
            if (known) known.messages++
            else if (tracked < PLACEHOLDERS_TRACKED) {
              const id = (extra.payload.metadata as Record<string, { id?: unknown }> | undefined)?.[metadataKey]?.id
              placeholders[extra.targetKey] = { legacyId: typeof id === 'string' ? id : extra.targetKey, messages: 1 }
              tracked++
            } else {
              placeholderOthers.messages++
              if (!plannedExtras.has(extra.targetKey)) placeholderOthers.placeholders++
            }
          }
          if (plannedExtras.has(extra.targetKey)) continue
          plannedExtras.add(extra.targetKey)
          entities.users.extras[reason] = (entities.users.extras[reason] ?? 0) + 1
          extras.push({ legacyId: `~${reason}:${extra.targetKey}`, targetKey: extra.targetKey, payload: extra.payload })
        }
        remember(entity, record, result.items[0] as MappedItem | undefined, undefined)
      }
      // Id decisions are saved before the page: the cursor must never run ahead of them.
      await sink.saveIds(ids)
      if (extras.length > 0) addCounts(entities.users.ledger, await sink.writeExtras(extras))
      lastCursor = page.cursor
      if (typeof page.watermark === 'number') watermark = Math.max(watermark ?? 0, page.watermark)
      // Mid-delta, the entity's watermark stays where the delta started: rows come in key order,
      // not change order, so a higher one could skip unread rows after a crash.
      const counts = await sink.writePage(entity, {
        items,
        skips,
        rejects,
        cursor: mode === 'delta' ? { ...page.cursor, complete: 1, delta: since ?? 0 } : page.cursor,
        watermark: mode === 'delta' ? undefined : watermark,
        messages: thisPage,
      })
      addCounts(summary.ledger, counts)
      options.onPage?.(entity, summary)

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
          if (typeof id !== 'string' || id === '') return
          const value = skip ?? (item ? plannedMessage(item.payload as MessageImport, nameOfUid) : undefined)
          if (value === undefined) return
          pageMessages.set(id, value)
          thisPage.set(id, value)
        }
      }
    }
    // The read is complete: later full runs skip it, delta runs start from its watermark.
    await sink.finishEntity(entity, lastCursor, watermark ?? session.snapshotAt)
    if (options.countSource && after === undefined) {
      summary.sourceCount = await session.count(entity, since !== undefined ? { since } : {})
      if (summary.sourceCount !== summary.sourceRows) {
        logger?.error({ entity, counted: summary.sourceCount, read: summary.sourceRows }, `the source counts ${summary.sourceCount} ${entity} rows but ${summary.sourceRows} were read`)
      }
    }
    logger?.info({ entity, rows: summary.sourceRows, ledger: summary.ledger }, `planned ${entity}`)
  }
  return { snapshotAt: session.snapshotAt, entities, outcomes, months, retentionStart, placeholders, placeholderOthers }
}

/** The reject reason a row problem is counted under: NULL and duplicate keys by name, the rest as unreadable. */
function problemReason(row: RowProblem): string {
  if (row.reason.startsWith('duplicate key (')) return `duplicate key (${row.field})`
  if (row.reason.startsWith('duplicate id ')) return `duplicate id (${row.field})`
  if (row.reason.startsWith('key column ')) return `NULL key ${row.field}`
  return `unreadable ${row.field}`
}

/** The ledger key of a row problem: one per problem, even when rows share a legacy id. */
function problemKey(row: RowProblem): string {
  return row.instance === undefined ? `~legacy:${row.legacyId}` : `~legacy:${row.legacyId}#${row.instance}`
}

/** An item of this page that another legacy row already maps to the same target key, if any. */
function targetKeyTwin(
  items: readonly MappedItem[],
  legacyId: string,
  pageKeys: ReadonlyMap<string, string>,
): { targetKey: string; legacyId: string } | undefined {
  for (const item of items) {
    const other = pageKeys.get(item.targetKey)
    if (other !== undefined && other !== legacyId) return { targetKey: item.targetKey, legacyId: other }
  }
  return undefined
}

/** The key part of a saved cursor (without the `complete` and `delta` marks). */
function keyOf(cursor: Cursor): Cursor {
  const { complete: _c, delta: _d, ...key } = cursor as Cursor & { complete?: unknown; delta?: unknown }
  return key as Cursor
}

/** Thread parents of a page that were planned on earlier pages: one lookup. */
async function parentsOf(
  rows: readonly { ok: boolean }[],
  sink: PlanSink,
  nameOfUid: (uid: string) => string | undefined,
): Promise<Map<string, PlannedMessage | SkippedRef>> {
  const parentIds = new Set<string>()
  for (const r of rows) {
    const parent = r.ok ? (r as unknown as { record: LegacyMessage }).record.threadParentId : undefined
    if (parent !== undefined && parent !== null && parent !== '') parentIds.add(parent)
  }
  if (parentIds.size === 0) return new Map()
  return sink.parents([...parentIds], nameOfUid)
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

/**
 * The sink of real planning: every page, its skips, rejects and cursor go into the ledger in one
 * transaction; id decisions are saved before their page; lookups are rebuilt from the ledger.
 */
export function createLedgerSink(store: LedgerStore, jobId: string): PlanSink {
  return {
    resumable: true,
    loadIds: () => loadIdMap(store, jobId),
    saveIds: (ids) => saveIdMap(store, jobId, ids),
    loadUsers: (metadataKey) => loadUsers(store, jobId, metadataKey),
    loadGroups: () => loadGroups(store, jobId),
    parents: (legacyIds, nameOfUid) => loadMessages(store, jobId, legacyIds, nameOfUid),
    getCursor: (entity) => store.getCursor(jobId, entity),
    writeExtras: (items) => store.planItems(jobId, 'users', items),
    writePage: (entity, page) =>
      store.planPage(jobId, entity, {
        items: page.items,
        skips: page.skips,
        rejects: page.rejects,
        cursor: { value: page.cursor, ...(page.watermark !== undefined ? { watermark: page.watermark } : {}) },
      }),
    finishEntity: (entity, cursor, watermark) => store.saveCursor(jobId, entity, { ...(cursor ?? {}), complete: 1 }, watermark),
  }
}
