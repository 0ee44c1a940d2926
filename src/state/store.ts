/**
 * The ledger store: one Postgres schema (`chatferry`) on a server or in the embedded PGlite
 * database, migrated on first use. It is the single source of truth of a migration: every item,
 * its fate, every batch, the cursors of extraction, the id map and the shared quota budget.
 *
 * The planner fills it ({@link LedgerStore.planPage}); the loader drains it (`src/load/`).
 */
import { existsSync, readdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'

import { type Kysely, sql } from 'kysely'
import { type MigrationResult, Migrator } from 'kysely/migration'

import { type DatabaseLocation, openDatabase, type OpenedDatabase } from '../db.ts'
import { readTemplate, saveTemplate, templateFile } from '../db-template.ts'
import { ENTITIES, type Entity } from '../target/schemas.ts'
import { type AcceptedRejectsLedger, createAcceptedRejectsLedger } from './accepted-rejects-ledger.ts'
import { type BatchLedger, createBatchLedger } from './batch-ledger.ts'
import { recordSkippedChanges } from './changed-items.ts'
import { createDryRunLedger, type DryRunLedger } from './dry-run-ledger.ts'
import { createFilesLedger, type FilesLedger } from './files-ledger.ts'
import { createFleetLedger, type FleetLedger } from './fleet-ledger.ts'
import { registerLedgerDatabase } from './inspect-ledger.ts'
import { createLedgerSessions, type LedgerSessions } from './ledger-sessions.ts'
import { MIGRATIONS } from './migrations/index.ts'
import { recordOrphanedParts } from './orphaned-parts.ts'
import type { PlanCounts, PlannedItem, RejectedItem, SkippedItem } from './plan-items.ts'
import { createPlanLookups, type PlanLookups } from './plan-lookups.ts'
import { createPlatformEventsLedger, type PlatformEventsLedger } from './platform-events-ledger.ts'
import { createQuotaLedger, type QuotaLedger } from './quota-ledger.ts'
import { createReportArchive, type ReportArchive } from './report-archive.ts'
import { cursorValue, storableJson, storableTextOrNull } from './safe-text.ts'
import type { DoneReason, ItemStatus, RunMode, RunStatus, StateDatabase } from './schema.ts'
import { deleteCursors } from './sql/delete-cursors.ts'
import { deleteJob, type PurgedRows } from './sql/delete-job.ts'
import { type RejectStanding, rejectStanding } from './sql/reject-standing.ts'
import { replanDoneRemovals } from './sql/replan-done-removals.ts'
import { replanItems } from './sql/replan-items.ts'
import { type CursorRow, selectCursors } from './sql/select-cursors.ts'
import { selectHasItems } from './sql/select-has-items.ts'
import { updateRunDied } from './sql/update-run-died.ts'
import { upsertCursor } from './sql/upsert-cursor.ts'
import { upsertPlannedFiles } from './sql/upsert-planned-files.ts'
import { type PlannedChanges, upsertPlannedItems } from './sql/upsert-planned-items.ts'
import { upsertRejectedItems } from './sql/upsert-rejected-items.ts'
import { upsertSkippedItems } from './sql/upsert-skipped-items.ts'
import { createStatusLookups, type StatusLookups } from './status-lookups.ts'
import { createUpdateLaneLedger, type UpdateLaneLedger } from './update-lane-ledger.ts'
import { addRecorded, createUpdatePlanLedger, type UpdatePlanLedger } from './update-plan-ledger.ts'
import { createVerifyLookups, type VerifyLookups } from './verify-lookups.ts'
import { createWorkerRegistry, type WorkerRegistry } from './worker-registry.ts'

/** The Postgres schema that holds every ledger table. */
export const STATE_SCHEMA = 'chatferry'

/** A page of the planner: items, skips and rejects of one entity, and the cursor after the page. */
export interface PlanPage {
  readonly items?: readonly PlannedItem[]
  readonly skips?: readonly SkippedItem[]
  readonly rejects?: readonly RejectedItem[]
  /** Saved in the same transaction as the items, so a cursor never runs ahead of the ledger. */
  readonly cursor?: { readonly value: unknown; readonly watermark?: unknown }
  /**
   * How changes of loaded items become update intents, recorded in the page's transaction: a done
   * item with a new payload, or whose record is now skipped, is classified (`changed-items.ts`).
   * Absent: a changed done item is only counted as loaded-but-changed (its payload overwritten).
   */
  readonly changes?: PlannedChanges
}

export interface CursorState {
  readonly cursor: unknown
  readonly watermark: unknown
  readonly updatedAt: Date
}

/** Per-entity counts of the ledger (the `status` command). */
export interface EntityStats {
  entity: Entity
  total: number
  planned: number
  sent: number
  done: number
  created: number
  alreadyPresent: number
  skipped: number
  /** Rejected and not accepted: what makes a run exit 3 (rejects of rows loaded since under their key are not counted at all). */
  rejected: number
  /** Rejected, and accepted by an operator (`chatferry accept-rejects`): counted in `total`, not in `rejected`. */
  accepted: number
  /** planned + sent */
  remaining: number
  loadedButChanged: number
  requests: number
  rateLimited: number
  batches: number
  /** Requests settled in the last minute. */
  requestsLastMinute: number
  /** Items settled done in the last minute. */
  itemsLastMinute: number
}

export interface RejectRecord {
  entity: Entity
  legacyId: string
  targetKey: string
  code: string | null
  message: string | null
  attempts: number
  updatedAt: Date
  /** Whether the item has a payload `retry-rejected` can send again (a row that could not be mapped has none). */
  resendable: boolean
}

export interface RunRecord {
  id: number
  jobId: string
  mode: RunMode
  status: RunStatus
  owner: string | null
  startedAt: Date
  heartbeatAt: Date
  finishedAt: Date | null
  stats: unknown
  error: string | null
}

export interface IdMapping {
  readonly legacyId: string
  readonly platformId: string
}

/** The ledger. Every method is safe to call from several processes at once. */
export interface LedgerStore {
  /** True when the store is the embedded PGlite database (one process only). */
  readonly embedded: boolean
  /** Plan and verify reports of the job's runs (`chatferry.reports`). */
  readonly reports: ReportArchive
  /** What planning reads back when it resumes (id map, users, groups, thread parents). */
  readonly planLookups: PlanLookups
  /** The dry run's read-only view of the ledger, on a dedicated connection. */
  readonly dryRun: DryRunLedger
  /** What `verify` reads to reconcile the ledger with the platform. */
  readonly verifyLookups: VerifyLookups
  /** What `status` reads for the retention edge (`status-lookups.ts`). */
  readonly statusLookups: StatusLookups
  /** The loader's batches and items: pack, claim, settle, split, release, takeover (`batch-ledger.ts`). */
  readonly batches: BatchLedger
  /** The apps' shared request budgets (`quota-ledger.ts`). */
  readonly quota: QuotaLedger
  /** The live loader processes (`worker-registry.ts`). */
  readonly workers: WorkerRegistry
  /** Raw sessions for pg-boss, which keeps its own tables in the ledger's database (`ledger-sessions.ts`). */
  readonly sessions: LedgerSessions
  /** The update lane's claims and settlements of `chatferry.updates` (`update-lane-ledger.ts`). */
  readonly updateLane: UpdateLaneLedger
  /** The files lane's files and message links (issue 27): `files-ledger.ts`. */
  readonly files: FilesLedger
  /** Update intents of items already on the platform: record, count, vanished items (`update-plan-ledger.ts`). */
  readonly updatePlan: UpdatePlanLedger
  /** The rejects an operator accepted, with who, when and why (`accept-rejects`). */
  readonly acceptedRejects: AcceptedRejectsLedger
  /** The tenant → app bindings of fleets, keys sealed (`fleet-ledger.ts`). */
  readonly fleet: FleetLedger
  /** Changes made on the platform, from webhook deliveries, and the receiver's registration (`platform-events-ledger.ts`). */
  readonly platformEvents: PlatformEventsLedger
  /** Creates the job row when missing (idempotent). */
  ensureJob(jobId: string, appId: string): Promise<void>
  /** Upserts planned items in one multi-row statement (see {@link PlanCounts} for what happens to known items). */
  planItems(jobId: string, entity: Entity, items: readonly PlannedItem[]): Promise<PlanCounts>
  /** Items, skips, rejects and the cursor of one page, in one transaction. */
  planPage(jobId: string, entity: Entity, page: PlanPage): Promise<PlanCounts>
  skipItems(jobId: string, entity: Entity, items: readonly SkippedItem[]): Promise<number>
  skipItem(jobId: string, entity: Entity, item: SkippedItem): Promise<number>
  rejectItems(jobId: string, entity: Entity, items: readonly RejectedItem[]): Promise<number>
  rejectItem(jobId: string, entity: Entity, item: RejectedItem): Promise<number>
  getCursor(jobId: string, entity: Entity): Promise<CursorState | undefined>
  /** Every saved cursor and watermark of the job (`chatferry cursors`). */
  listCursors(jobId: string): Promise<CursorRow[]>
  /** Deletes the cursors of these entities: their next full read starts over (`cursors reset`, `run --reread`); returns those deleted. */
  resetCursors(jobId: string, entities: readonly Entity[]): Promise<string[]>
  /** Saves a cursor on its own; prefer {@link planPage}, which saves it with its page. */
  saveCursor(jobId: string, entity: Entity, cursor: unknown, watermark?: unknown): Promise<void>
  startRun(jobId: string, mode: RunMode, owner?: string): Promise<number>
  heartbeatRun(runId: number, stats?: unknown): Promise<void>
  finishRun(runId: number, status: Exclude<RunStatus, 'running'>, stats?: unknown, error?: string): Promise<void>
  /** The job's newest runs, newest first; only those of `modes` when given. */
  listRuns(jobId: string, limit?: number, modes?: readonly RunMode[]): Promise<RunRecord[]>
  /** Marks a `running` run whose process died as `interrupted`, ended at its last heartbeat; returns 1, or 0 when it was not running. */
  markRunDied(runId: number, why: string): Promise<number>
  /**
   * Records legacy id → platform id pairs. Returns the pairs that could not be recorded because
   * the legacy id already maps elsewhere or the platform id is taken by another legacy id.
   */
  saveIdMappings(jobId: string, kind: string, mappings: readonly IdMapping[]): Promise<IdMapping[]>
  lookupIds(jobId: string, kind: string, legacyIds: readonly string[]): Promise<Map<string, string>>
  /** Per-entity counts of items and requests (a scan of the job's items: seconds on a large job). */
  entityStats(jobId: string): Promise<EntityStats[]>
  /** Whether the job holds any item at all (cheap, whatever its size). */
  hasItems(jobId: string): Promise<boolean>
  listRejects(jobId: string, filter?: { code?: string; entity?: Entity; limit?: number }): Promise<RejectRecord[]>
  /** Plans rejected items again (all, or those with `code`); returns how many. */
  retryRejected(jobId: string, filter?: { code?: string; entity?: Entity }): Promise<number>
  /** `verify --replan`: plans again done items the platform lacks and rejected ones it holds (`sql/replan-items.ts`); returns how many. */
  replanItems(jobId: string, entity: string, keys: readonly string[]): Promise<number>
  /** `verify --replan`: plans again the done removal of items the platform still shows (`sql/replan-done-removals.ts`); returns how many. */
  replanDoneRemovals(jobId: string, entity: string, keys: readonly string[]): Promise<number>
  /** Lists the job ids in the ledger. */
  listJobs(): Promise<{ id: string; appId: string }[]>
  /** Deletes every row of the job, in one transaction (`chatferry purge`); the pg-boss schedule queue is the caller's. */
  purgeJob(jobId: string): Promise<PurgedRows>
  close(): Promise<void>
}

export type { ChangeClassifier, ChangedItem, ChangeVerdict } from './changed-items.ts'
export { storedPayload } from './changed-items.ts'
export type { OrphanedParts } from './orphaned-parts.ts'
export { payloadHash } from './payload.ts'
export type { PlanCounts, PlannedFile, PlannedItem, RejectedItem, SkippedItem } from './plan-items.ts'
export type { PurgedRows } from './sql/delete-job.ts'
export type { CursorRow } from './sql/select-cursors.ts'
export type { PlannedChanges } from './sql/upsert-planned-items.ts'

/** Runs the ledger migrations (idempotent; concurrent callers are serialised by kysely's lock). */
export async function migrateLedger(db: Kysely<StateDatabase>): Promise<MigrationResult[]> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => MIGRATIONS },
    migrationTableSchema: STATE_SCHEMA,
  })
  const { error, results } = await migrator.migrateToLatest()
  if (error) {
    throw new Error(`the ledger migration failed: ${(error as Error).message ?? String(error)}`, { cause: error })
  }
  return results ?? []
}

/** A {@link PlanCounts} with every count at zero. */
export const emptyCounts = (): PlanCounts => ({
  inserted: 0,
  updated: 0,
  unchanged: 0,
  loadedButChanged: 0,
  replanned: 0,
  skipped: 0,
  rejected: 0,
  duplicates: 0,
})

function assertEntity(entity: string): asserts entity is Entity {
  if (!(ENTITIES as readonly string[]).includes(entity)) {
    throw new TypeError(`Expected an entity (${ENTITIES.join(', ')}), got ${JSON.stringify(entity)}`)
  }
}

/** Wraps an opened database as the ledger; runs migrations first. */
export async function createLedgerStore(database: OpenedDatabase<StateDatabase>): Promise<LedgerStore> {
  const db = database.db
  await migrateLedger(db)

  async function planPage(jobId: string, entity: Entity, page: PlanPage): Promise<PlanCounts> {
    assertEntity(entity)
    const counts = emptyCounts()
    await db.transaction().execute(async (trx) => {
      const { collisions, changed } = await upsertPlannedItems(trx, jobId, entity, page.items ?? [], counts, page.changes)
      if (entity === 'messages') {
        const refused = new Set(collisions.map((c) => c.targetKey))
        await upsertPlannedFiles(
          trx,
          jobId,
          (page.items ?? []).filter((i) => !refused.has(i.targetKey)),
        )
      }
      counts.skipped = await upsertSkippedItems(trx, jobId, entity, page.skips ?? [])
      if (page.changes?.orphans && changed.size > 0) {
        // Parts of a split message its new mapping no longer has: removed, or skipped when unsent.
        const { classify, conflicts, orphans } = page.changes
        const parts = await recordOrphanedParts(trx, jobId, entity, changed, orphans, classify, conflicts ?? 'report')
        addRecorded(page.changes.recorded, parts.recorded)
        counts.skipped += parts.skipped
      }
      if (page.changes && (page.skips ?? []).length > 0) {
        addRecorded(
          page.changes.recorded,
          await recordSkippedChanges(trx, jobId, entity, page.skips ?? [], page.changes.classify, page.changes.conflicts),
        )
      }
      counts.rejected = await upsertRejectedItems(trx, jobId, entity, [...(page.rejects ?? []), ...collisions])
      if (page.cursor !== undefined) {
        await upsertCursor(trx, jobId, entity, page.cursor.value, page.cursor.watermark)
      }
    })
    return counts
  }

  const store: LedgerStore = {
    embedded: database.embedded,
    reports: createReportArchive(db),
    planLookups: createPlanLookups(db),
    dryRun: createDryRunLedger(db),
    verifyLookups: createVerifyLookups(db),
    statusLookups: createStatusLookups(db),
    batches: createBatchLedger(db),
    quota: createQuotaLedger(db),
    workers: createWorkerRegistry(db),
    sessions: createLedgerSessions(database),
    updateLane: createUpdateLaneLedger(db),
    files: createFilesLedger(db),
    updatePlan: createUpdatePlanLedger(db),
    acceptedRejects: createAcceptedRejectsLedger(db),
    fleet: createFleetLedger(db),
    platformEvents: createPlatformEventsLedger(db),
    async ensureJob(jobId, appId) {
      await db
        .insertInto('chatferry.jobs')
        .values({ id: jobId, app_id: appId })
        .onConflict((oc) => oc.column('id').doNothing())
        .execute()
    },
    planItems: (jobId, entity, items) => planPage(jobId, entity, { items }),
    planPage,
    skipItems: (jobId, entity, items) => (assertEntity(entity), upsertSkippedItems(db, jobId, entity, items)),
    skipItem: (jobId, entity, item) => (assertEntity(entity), upsertSkippedItems(db, jobId, entity, [item])),
    rejectItems: (jobId, entity, items) => (assertEntity(entity), upsertRejectedItems(db, jobId, entity, items)),
    rejectItem: (jobId, entity, item) => (assertEntity(entity), upsertRejectedItems(db, jobId, entity, [item])),
    async getCursor(jobId, entity) {
      const row = await db
        .selectFrom('chatferry.cursors')
        .select(['cursor', 'watermark', 'updated_at'])
        .where('job_id', '=', jobId)
        .where('entity', '=', entity)
        .executeTakeFirst()
      return row ? { cursor: cursorValue(row.cursor), watermark: cursorValue(row.watermark), updatedAt: new Date(row.updated_at) } : undefined
    },
    listCursors: (jobId) => selectCursors(db, jobId),
    resetCursors: (jobId, entities) => deleteCursors(db, jobId, entities),
    saveCursor: (jobId, entity, cursor, watermark) => upsertCursor(db, jobId, entity, cursor, watermark),
    async startRun(jobId, mode, owner) {
      const row = await db
        .insertInto('chatferry.runs')
        .values({ job_id: jobId, mode, owner: owner ?? null, stats: '{}' })
        .returning('id')
        .executeTakeFirstOrThrow()
      return Number(row.id)
    },
    async heartbeatRun(runId, stats) {
      await db
        .updateTable('chatferry.runs')
        .set({ heartbeat_at: sql`now()` as never, ...(stats !== undefined ? { stats: storableJson(stats) } : {}) })
        .where('id', '=', runId)
        .execute()
    },
    async finishRun(runId, status, stats, error) {
      await db
        .updateTable('chatferry.runs')
        .set({
          status,
          finished_at: sql`now()` as never,
          heartbeat_at: sql`now()` as never,
          ...(stats !== undefined ? { stats: storableJson(stats) } : {}),
          ...(error !== undefined ? { error: storableTextOrNull(error) } : {}),
        })
        .where('id', '=', runId)
        .execute()
    },
    async listRuns(jobId, limit = 20, modes) {
      let q = db.selectFrom('chatferry.runs').selectAll().where('job_id', '=', jobId)
      if (modes !== undefined) {
        q = q.where('mode', 'in', [...modes])
      }
      const rows = await q.orderBy('id', 'desc').limit(limit).execute()
      return rows.map((r) => ({
        id: Number(r.id),
        jobId: r.job_id,
        mode: r.mode,
        status: r.status,
        owner: r.owner,
        startedAt: new Date(r.started_at),
        heartbeatAt: new Date(r.heartbeat_at),
        finishedAt: r.finished_at ? new Date(r.finished_at) : null,
        stats: r.stats,
        error: r.error,
      }))
    },
    markRunDied: (runId, why) => updateRunDied(db, runId, storableTextOrNull(why) ?? why),
    async saveIdMappings(jobId, kind, mappings) {
      if (mappings.length === 0) {
        return []
      }
      const legacy = mappings.map((m) => m.legacyId)
      const platform = mappings.map((m) => m.platformId)
      await sql`
        insert into chatferry.id_map (job_id, kind, legacy_id, platform_id)
        select ${jobId}, ${kind}, t.l, t.p from unnest(${legacy}::text[], ${platform}::text[]) as t(l, p)
        on conflict do nothing`.execute(db)
      const found = await store.lookupIds(jobId, kind, legacy)
      return mappings.filter((m) => found.get(m.legacyId) !== m.platformId)
    },
    async lookupIds(jobId, kind, legacyIds) {
      const out = new Map<string, string>()
      if (legacyIds.length === 0) {
        return out
      }
      const rows = await sql<{ legacy_id: string; platform_id: string }>`
        select legacy_id, platform_id from chatferry.id_map
        where job_id = ${jobId} and kind = ${kind} and legacy_id = any(${[...legacyIds]}::text[])`.execute(db)
      for (const r of rows.rows) {
        out.set(r.legacy_id, r.platform_id)
      }
      return out
    },
    hasItems: (jobId) => selectHasItems(db, jobId),
    async entityStats(jobId) {
      const items = await sql<{
        entity: Entity
        status: ItemStatus
        done_reason: DoneReason | null
        changed: boolean
        standing: RejectStanding | null
        n: number
      }>`
        select entity, status, done_reason, (status = 'done' and loaded_hash is distinct from payload_hash) as changed,
          case when status = 'rejected' then ${rejectStanding('i')} end as standing, count(*)::int as n
        from chatferry.items i where job_id = ${jobId}
        group by 1, 2, 3, 4, 5`.execute(db)
      const batches = await sql<{ entity: Entity; requests: number; rate_limited: number; batches: number; recent: number; recent_items: number }>`
        select entity, coalesce(sum(requests), 0)::int as requests, coalesce(sum(rate_limited), 0)::int as rate_limited,
          count(*)::int as batches,
          coalesce(sum(requests) filter (where settled_at > now() - interval '60 seconds'), 0)::int as recent,
          0 as recent_items
        from chatferry.batches where job_id = ${jobId} group by 1`.execute(db)
      const recentItems = await sql<{ entity: Entity; n: number }>`
        select entity, count(*)::int as n from chatferry.items
        where job_id = ${jobId} and status = 'done' and updated_at > now() - interval '60 seconds' group by 1`.execute(db)
      const out = new Map<Entity, EntityStats>()
      for (const entity of ENTITIES) {
        out.set(entity, {
          entity,
          total: 0,
          planned: 0,
          sent: 0,
          done: 0,
          created: 0,
          alreadyPresent: 0,
          skipped: 0,
          rejected: 0,
          accepted: 0,
          remaining: 0,
          loadedButChanged: 0,
          requests: 0,
          rateLimited: 0,
          batches: 0,
          requestsLastMinute: 0,
          itemsLastMinute: 0,
        })
      }
      for (const r of items.rows) {
        const s = out.get(r.entity)
        if (!s || r.standing === 'superseded') {
          continue
        }
        s.total += r.n
        s[r.standing === 'accepted' ? 'accepted' : r.status] += r.n
        if (r.status === 'done') {
          if (r.done_reason === 'already_present') {
            s.alreadyPresent += r.n
          } else {
            s.created += r.n
          }
          if (r.changed) {
            s.loadedButChanged += r.n
          }
        }
      }
      for (const r of batches.rows) {
        const s = out.get(r.entity)
        if (!s) {
          continue
        }
        s.requests = r.requests
        s.rateLimited = r.rate_limited
        s.batches = r.batches
        s.requestsLastMinute = r.recent
      }
      for (const r of recentItems.rows) {
        const s = out.get(r.entity)
        if (s) {
          s.itemsLastMinute = r.n
        }
      }
      for (const s of out.values()) {
        s.remaining = s.planned + s.sent
      }
      return [...out.values()]
    },
    async listRejects(jobId, filter = {}) {
      let q = db
        .selectFrom('chatferry.items')
        .select(['entity', 'legacy_id', 'target_key', 'last_error_code', 'last_error_message', 'attempts', 'updated_at'])
        .select(sql<boolean>`payload is not null`.as('resendable'))
        .where('job_id', '=', jobId)
        .where('status', '=', 'rejected')
        // Open rejects only: `acceptedRejects.list` has the accepted ones; a row loaded since is no reject.
        .where(sql<boolean>`${rejectStanding('items')} = 'open'`)
      if (filter.code !== undefined) {
        q = q.where('last_error_code', '=', filter.code)
      }
      if (filter.entity !== undefined) {
        q = q.where('entity', '=', filter.entity)
      }
      const rows = await q
        .orderBy('id')
        .limit(filter.limit ?? 1_000_000)
        .execute()
      return rows.map((r) => ({
        entity: r.entity as Entity,
        legacyId: r.legacy_id,
        targetKey: r.target_key,
        code: r.last_error_code,
        message: r.last_error_message,
        attempts: r.attempts,
        updatedAt: new Date(r.updated_at),
        resendable: r.resendable,
      }))
    },
    async retryRejected(jobId, filter = {}) {
      // Only items with a payload can be sent; mapping rejects without one wait for a new plan.
      let q = db
        .updateTable('chatferry.items')
        .set({ status: 'planned', attempts: 0, batch_id: null, updated_at: sql`now()` as never })
        .where('job_id', '=', jobId)
        .where('status', '=', 'rejected')
        .where('payload', 'is not', null)
      if (filter.code !== undefined) {
        q = q.where('last_error_code', '=', filter.code)
      }
      if (filter.entity !== undefined) {
        q = q.where('entity', '=', filter.entity)
      }
      const r = await q.executeTakeFirst()
      return Number(r.numUpdatedRows)
    },
    replanItems: (jobId, entity, keys) => replanItems(db, { jobId, entity, keys }),
    replanDoneRemovals: (jobId, entity, keys) => replanDoneRemovals(db, { jobId, entity, keys }),
    async listJobs() {
      const rows = await db.selectFrom('chatferry.jobs').select(['id', 'app_id']).orderBy('id').execute()
      return rows.map((r) => ({ id: r.id, appId: r.app_id }))
    },
    purgeJob: (jobId) => db.transaction().execute((trx) => deleteJob(trx, jobId)),
    close: () => database.close(),
  }
  registerLedgerDatabase(store, db)
  return store
}

/** Opens the ledger at a Postgres URL or in an embedded directory, migrating it on first use. */
export async function openLedger(location: DatabaseLocation): Promise<LedgerStore> {
  if ('dir' in location && location.dir !== 'memory://' && !existsSync(join(location.dir, 'PG_VERSION'))) {
    return openNewEmbeddedLedger(location.dir)
  }
  return (await openLedgerOnce(location)).store
}

/**
 * The migrated, empty embedded ledger's template (src/db-template.ts): a new job's ledger starts
 * from it instead of initdb and every migration. `CHATFERRY_LEDGER_CACHE` moves it (default: the
 * system's temporary directory); `CHATFERRY_LEDGER_CACHE=off` turns it off.
 */
const ledgerTemplateFile = () => templateFile('CHATFERRY_LEDGER_CACHE', 'chatferry-ledger', Object.keys(MIGRATIONS))

/** The entries of `dir` (none when it is missing). */
function entriesOf(dir: string): Set<string> {
  return new Set(existsSync(dir) ? readdirSync(dir) : [])
}

/** A new embedded ledger in `dir` (no database in it yet): from the template when there is one, else made and then cached. */
async function openNewEmbeddedLedger(dir: string): Promise<LedgerStore> {
  const file = ledgerTemplateFile()
  const template = readTemplate(file)
  if (template !== undefined) {
    const before = entriesOf(dir)
    try {
      return (await openLedgerOnce({ dir, template })).store
    } catch {
      // A damaged template: remove what it wrote, and create the database from scratch.
      for (const entry of entriesOf(dir)) {
        if (!before.has(entry)) {
          rmSync(join(dir, entry), { recursive: true, force: true })
        }
      }
    }
  }
  const { store, database } = await openLedgerOnce({ dir })
  if (database.pglite !== undefined) {
    await saveTemplate(file, database.pglite)
  }
  return store
}

async function openLedgerOnce(location: DatabaseLocation): Promise<{ store: LedgerStore; database: OpenedDatabase<StateDatabase> }> {
  const database = await openDatabase<StateDatabase>(location)
  try {
    return { store: await createLedgerStore(database), database }
  } catch (err) {
    await database.close().catch(() => {})
    throw err
  }
}
