/**
 * The ledger store: one Postgres schema (`chatferry`) on a server or in the embedded PGlite
 * database, migrated on first use. It is the single source of truth of a migration: every item,
 * its fate, every batch, the cursors of extraction, the id map and the shared quota budget.
 *
 * The planner fills it ({@link LedgerStore.planPage}); the loader drains it (`src/load/`).
 */
import { hash } from 'node:crypto'
import { sql, type Kysely, type Transaction } from 'kysely'
import { Migrator, type MigrationResult } from 'kysely/migration'
import { openDatabase, type DatabaseLocation, type OpenedDatabase } from '../db.ts'
import { ENTITIES, type Entity } from '../target/schemas.ts'
import { createBatchLedger, type BatchLedger } from './batch-ledger.ts'
import { createLedgerSessions, type LedgerSessions } from './ledger-sessions.ts'
import { MIGRATIONS } from './migrations/index.ts'
import { createQuotaLedger, type QuotaLedger } from './quota-ledger.ts'
import { cursorJson, cursorValue, storableJson, storableKey, storableText, storableTextOrNull } from './safe-text.ts'
import type { DoneReason, ItemStatus, RunMode, RunStatus, StateDatabase } from './schema.ts'
import { createWorkerRegistry, type WorkerRegistry } from './worker-registry.ts'

/** The Postgres schema that holds every ledger table. */
export const STATE_SCHEMA = 'chatferry'

/** One item the planner wants loaded. */
export interface PlannedItem {
  /** The legacy system's id of the record (for reports). */
  readonly legacyId: string
  /** The deterministic platform key: uid, guid, `<guid>_member_<uid>` or muid. */
  readonly targetKey: string
  /** The import item, exactly as it will be sent (an object, or its JSON text). */
  readonly payload: unknown
  /** Drain order within the entity, ascending (messages: sentAt, so oldest first). @default 0 */
  readonly sortKey?: number
}

/** An item refused before sending by policy (deleted user, system message, …). */
export interface SkippedItem {
  readonly legacyId: string
  /** @default `~legacy:<legacyId>` (an item skipped before it got a key) */
  readonly targetKey?: string
  /** Why, e.g. `policy:deleted-user`. */
  readonly reason: string
}

/** An item refused before sending as invalid (a mapping reject); kept in quarantine with code and reason. */
export interface RejectedItem {
  readonly legacyId: string
  /** @default `~legacy:<legacyId>` */
  readonly targetKey?: string
  /** e.g. `MAPPING_INVALID`. */
  readonly code: string
  readonly message: string
  /** The payload that was refused, if there is one (kept so a fix can be checked). */
  readonly payload?: unknown
}

/** What one planning call did. */
export interface PlanCounts {
  /** New items, now `planned`: the rows this call inserted (a concurrent planner's inserts are not counted here). */
  inserted: number
  /** Known items whose payload changed before they were loaded (updated in place). */
  updated: number
  /** Known items whose payload was the same: untouched. */
  unchanged: number
  /** Items already loaded whose source changed since: recorded (`loaded_hash` ≠ `payload_hash`), never resent automatically. */
  loadedButChanged: number
  /** Rejected or skipped items that came back with a new payload: planned again. */
  replanned: number
  skipped: number
  rejected: number
  /** Items that appeared twice in one call (the last one won). */
  duplicates: number
}

/** A page of the planner: items, skips and rejects of one entity, and the cursor after the page. */
export interface PlanPage {
  readonly items?: readonly PlannedItem[]
  readonly skips?: readonly SkippedItem[]
  readonly rejects?: readonly RejectedItem[]
  /** Saved in the same transaction as the items, so a cursor never runs ahead of the ledger. */
  readonly cursor?: { readonly value: unknown; readonly watermark?: unknown }
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
  rejected: number
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
  readonly db: Kysely<StateDatabase>
  readonly database: OpenedDatabase<StateDatabase>
  /** True when the store is the embedded PGlite database (one process only). */
  readonly embedded: boolean
  /** The loader's batches and items: pack, claim, settle, split, release, takeover (`batch-ledger.ts`). */
  readonly batches: BatchLedger
  /** The apps' shared request budgets (`quota-ledger.ts`). */
  readonly quota: QuotaLedger
  /** The live loader processes (`worker-registry.ts`). */
  readonly workers: WorkerRegistry
  /** Raw sessions for pg-boss, which keeps its own tables in the ledger's database (`ledger-sessions.ts`). */
  readonly sessions: LedgerSessions
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
  /** Saves a cursor on its own; prefer {@link planPage}, which saves it with its page. */
  saveCursor(jobId: string, entity: Entity, cursor: unknown, watermark?: unknown): Promise<void>
  startRun(jobId: string, mode: RunMode, owner?: string): Promise<number>
  heartbeatRun(runId: number, stats?: unknown): Promise<void>
  finishRun(runId: number, status: Exclude<RunStatus, 'running'>, stats?: unknown, error?: string): Promise<void>
  listRuns(jobId: string, limit?: number): Promise<RunRecord[]>
  /**
   * Records legacy id → platform id pairs. Returns the pairs that could not be recorded because
   * the legacy id already maps elsewhere or the platform id is taken by another legacy id.
   */
  saveIdMappings(jobId: string, kind: string, mappings: readonly IdMapping[]): Promise<IdMapping[]>
  lookupIds(jobId: string, kind: string, legacyIds: readonly string[]): Promise<Map<string, string>>
  /** Per-entity counts of items and requests. */
  entityStats(jobId: string): Promise<EntityStats[]>
  listRejects(jobId: string, filter?: { code?: string; entity?: Entity; limit?: number }): Promise<RejectRecord[]>
  /** Plans rejected items again (all, or those with `code`); returns how many. */
  retryRejected(jobId: string, filter?: { code?: string; entity?: Entity }): Promise<number>
  /** Lists the job ids in the ledger. */
  listJobs(): Promise<{ id: string; appId: string }[]>
  close(): Promise<void>
}

/** Hash of a payload's JSON text: stable, short, and what "unchanged" compares. */
export function payloadHash(text: string): string {
  return hash('sha1', text, 'base64url')
}

function payloadText(payload: unknown): string {
  return typeof payload === 'string' ? payload : JSON.stringify(payload)
}

function placeholderKey(legacyId: string): string {
  return `~legacy:${storableKey(legacyId)}`
}

/** Runs the ledger migrations (idempotent; concurrent callers are serialised by kysely's lock). */
export async function migrateLedger(db: Kysely<any>): Promise<MigrationResult[]> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => MIGRATIONS },
    migrationTableSchema: STATE_SCHEMA,
  })
  const { error, results } = await migrator.migrateToLatest()
  if (error) throw new Error(`the ledger migration failed: ${(error as Error).message ?? String(error)}`, { cause: error })
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

type Executor = Kysely<StateDatabase> | Transaction<StateDatabase>

/**
 * Plans a page's items; returns the items it refused because another legacy row already holds
 * their target key in the ledger (written by the caller as `DUPLICATE_TARGET_KEY` rejects, so the
 * second row is neither lost nor allowed to overwrite the first). Two rows of one page are caught
 * by the planner before this; this catches the ones on different pages or runs.
 */
async function upsertPlanned(db: Executor, jobId: string, entity: Entity, items: readonly PlannedItem[], counts: PlanCounts): Promise<RejectedItem[]> {
  if (items.length === 0) return []
  // One statement cannot touch a row twice: the last occurrence of a key wins.
  const byKey = new Map<string, PlannedItem>()
  for (const item of items) byKey.set(storableKey(item.targetKey), item)
  counts.duplicates += items.length - byKey.size
  const legacy: string[] = []
  const keys: string[] = []
  const payloads: string[] = []
  const hashes: string[] = []
  const sorts: number[] = []
  for (const [key, item] of byKey) {
    const text = payloadText(item.payload)
    legacy.push(storableText(String(item.legacyId)))
    keys.push(key)
    payloads.push(text)
    hashes.push(payloadHash(text))
    sorts.push(Math.trunc(item.sortKey ?? 0))
  }
  // "New" is what this call inserted, as the insert itself reports it: a concurrent planner of
  // the same job that inserted a key first makes it "unchanged" (or "updated") here, never new twice.
  const inserted = await sql<{ target_key: string }>`
    insert into chatferry.items (job_id, entity, legacy_id, target_key, payload, payload_hash, sort_key, status)
    select ${jobId}, ${entity}, t.l, t.k, t.p, t.h, t.s, 'planned'
    from unnest(${legacy}::text[], ${keys}::text[], ${payloads}::text[], ${hashes}::text[], ${sorts}::bigint[]) as t(l, k, p, h, s)
    on conflict (job_id, entity, target_key) do nothing
    returning target_key`.execute(db)
  counts.inserted += inserted.rows.length
  const mine = new Set(inserted.rows.map((r) => r.target_key))
  const known = [...keys.keys()].filter((i) => !mine.has(keys[i] as string))
  if (known.length === 0) return []
  // Classify the known ones against what the ledger holds (locked, so a concurrent planner cannot race us).
  const old = await sql<{ target_key: string; legacy_id: string; status: ItemStatus; payload_hash: string | null }>`
    select target_key, legacy_id, status, payload_hash from chatferry.items
    where job_id = ${jobId} and entity = ${entity} and target_key = any(${known.map((i) => keys[i] as string)}::text[])
    for update`.execute(db)
  const held = new Map(old.rows.map((r) => [r.target_key, r]))
  const collisions: RejectedItem[] = []
  const rest = known.filter((i) => {
    const was = held.get(keys[i] as string)
    if (was === undefined || was.legacy_id === legacy[i]) return true
    collisions.push({
      legacyId: legacy[i] as string,
      targetKey: `~legacy:${legacy[i] as string}#duplicate-of:${was.legacy_id}`,
      code: 'DUPLICATE_TARGET_KEY',
      message: `targetKey: legacy rows ${was.legacy_id} and ${legacy[i] as string} both map to ${keys[i] as string}; the first (${was.legacy_id}) is kept`,
      // No payload: `retry-rejected` must not send it, the first row owns the key on the platform.
    })
    return false
  })
  counts.duplicates += collisions.length
  if (rest.length === 0) return collisions
  const pick = <T>(values: T[]) => rest.map((i) => values[i] as T)
  for (const i of rest) {
    const was = held.get(keys[i] as string)
    if (was === undefined || was.payload_hash === hashes[i]) counts.unchanged++
    else if (was.status === 'rejected' || was.status === 'skipped') counts.replanned++
    else if (was.status === 'done') counts.loadedButChanged++
    else counts.updated++
  }
  // A rejected or skipped item that comes back with a new payload is planned again; a done item
  // keeps its status and `loaded_hash` (the change is recorded, not resent).
  await sql`
    update chatferry.items as i set
      legacy_id = t.l,
      payload = t.p,
      payload_hash = t.h,
      sort_key = t.s,
      status = case when i.status in ('rejected', 'skipped') then 'planned' else i.status end,
      attempts = case when i.status in ('rejected', 'skipped') then 0 else i.attempts end,
      last_error_code = case when i.status in ('rejected', 'skipped') then null else i.last_error_code end,
      last_error_message = case when i.status in ('rejected', 'skipped') then null else i.last_error_message end,
      updated_at = now()
    from unnest(${pick(legacy)}::text[], ${pick(keys)}::text[], ${pick(payloads)}::text[], ${pick(hashes)}::text[], ${pick(sorts)}::bigint[]) as t(l, k, p, h, s)
    where i.job_id = ${jobId} and i.entity = ${entity} and i.target_key = t.k and i.payload_hash is distinct from t.h
  `.execute(db)
  return collisions
}

async function writeSkips(db: Executor, jobId: string, entity: Entity, items: readonly SkippedItem[]): Promise<number> {
  if (items.length === 0) return 0
  const byKey = new Map<string, SkippedItem>()
  for (const it of items) byKey.set(it.targetKey !== undefined ? storableKey(it.targetKey) : placeholderKey(it.legacyId), it)
  const keys = [...byKey.keys()]
  const legacy = [...byKey.values()].map((i) => storableText(String(i.legacyId)))
  const reasons = [...byKey.values()].map((i) => storableText(i.reason))
  // Never downgrades an item that is loaded or on the wire.
  const r = await sql`
    insert into chatferry.items as i (job_id, entity, legacy_id, target_key, status, last_error_code, last_error_message)
    select ${jobId}, ${entity}, t.l, t.k, 'skipped', 'SKIPPED', t.r
    from unnest(${legacy}::text[], ${keys}::text[], ${reasons}::text[]) as t(l, k, r)
    on conflict (job_id, entity, target_key) do update set
      status = 'skipped', last_error_code = 'SKIPPED', last_error_message = excluded.last_error_message,
      payload = null, payload_hash = null, updated_at = now()
    where i.status in ('planned', 'rejected', 'skipped')`.execute(db)
  return Number(r.numAffectedRows ?? 0)
}

async function writeRejects(db: Executor, jobId: string, entity: Entity, items: readonly RejectedItem[]): Promise<number> {
  if (items.length === 0) return 0
  const byKey = new Map<string, RejectedItem>()
  for (const it of items) byKey.set(it.targetKey !== undefined ? storableKey(it.targetKey) : placeholderKey(it.legacyId), it)
  const vals = [...byKey.values()]
  const keys = [...byKey.keys()]
  const payloads = vals.map((i) => (i.payload === undefined ? null : payloadText(i.payload)))
  const hashes = payloads.map((p) => (p === null ? null : payloadHash(p)))
  const r = await sql`
    insert into chatferry.items as i (job_id, entity, legacy_id, target_key, payload, payload_hash, status, last_error_code, last_error_message)
    select ${jobId}, ${entity}, t.l, t.k, t.p, t.h, 'rejected', t.c, t.m
    from unnest(${vals.map((i) => storableText(String(i.legacyId)))}::text[], ${keys}::text[], ${payloads}::text[], ${hashes}::text[],
                ${vals.map((i) => storableText(i.code))}::text[], ${vals.map((i) => storableText(i.message))}::text[]) as t(l, k, p, h, c, m)
    on conflict (job_id, entity, target_key) do update set
      status = 'rejected', last_error_code = excluded.last_error_code, last_error_message = excluded.last_error_message,
      payload = excluded.payload, payload_hash = excluded.payload_hash, updated_at = now()
    where i.status in ('planned', 'rejected', 'skipped')`.execute(db)
  return Number(r.numAffectedRows ?? 0)
}

async function writeCursor(db: Executor, jobId: string, entity: Entity, cursor: unknown, watermark: unknown) {
  const c = cursor === undefined ? null : cursorJson(cursor)
  const w = watermark === undefined ? null : cursorJson(watermark)
  await sql`
    insert into chatferry.cursors (job_id, entity, cursor, watermark, updated_at)
    values (${jobId}, ${entity}, ${c}::jsonb, ${w}::jsonb, now())
    on conflict (job_id, entity) do update set cursor = excluded.cursor,
      watermark = coalesce(excluded.watermark, chatferry.cursors.watermark), updated_at = now()`.execute(db)
}

function assertEntity(entity: string): asserts entity is Entity {
  if (!(ENTITIES as readonly string[]).includes(entity)) {
    throw new TypeError(`Expected an entity (${ENTITIES.join(', ')}), got ${JSON.stringify(entity)}`)
  }
}

/** Wraps an opened database as the ledger; runs migrations first. */
export async function createLedgerStore(database: OpenedDatabase<StateDatabase>): Promise<LedgerStore> {
  const db = database.db
  await migrateLedger(db as Kysely<any>)

  async function planPage(jobId: string, entity: Entity, page: PlanPage): Promise<PlanCounts> {
    assertEntity(entity)
    const counts = emptyCounts()
    await db.transaction().execute(async (trx) => {
      const collisions = await upsertPlanned(trx, jobId, entity, page.items ?? [], counts)
      counts.skipped = await writeSkips(trx, jobId, entity, page.skips ?? [])
      counts.rejected = await writeRejects(trx, jobId, entity, [...(page.rejects ?? []), ...collisions])
      if (page.cursor !== undefined) await writeCursor(trx, jobId, entity, page.cursor.value, page.cursor.watermark)
    })
    return counts
  }

  const store: LedgerStore = {
    db,
    database,
    embedded: database.embedded,
    batches: createBatchLedger(db),
    quota: createQuotaLedger(db),
    workers: createWorkerRegistry(db),
    sessions: createLedgerSessions(database),
    async ensureJob(jobId, appId) {
      await db
        .insertInto('chatferry.jobs')
        .values({ id: jobId, app_id: appId })
        .onConflict((oc) => oc.column('id').doNothing())
        .execute()
    },
    planItems: (jobId, entity, items) => planPage(jobId, entity, { items }),
    planPage,
    skipItems: (jobId, entity, items) => (assertEntity(entity), writeSkips(db, jobId, entity, items)),
    skipItem: (jobId, entity, item) => (assertEntity(entity), writeSkips(db, jobId, entity, [item])),
    rejectItems: (jobId, entity, items) => (assertEntity(entity), writeRejects(db, jobId, entity, items)),
    rejectItem: (jobId, entity, item) => (assertEntity(entity), writeRejects(db, jobId, entity, [item])),
    async getCursor(jobId, entity) {
      const row = await db
        .selectFrom('chatferry.cursors')
        .select(['cursor', 'watermark', 'updated_at'])
        .where('job_id', '=', jobId)
        .where('entity', '=', entity)
        .executeTakeFirst()
      return row ? { cursor: cursorValue(row.cursor), watermark: cursorValue(row.watermark), updatedAt: new Date(row.updated_at) } : undefined
    },
    saveCursor: (jobId, entity, cursor, watermark) => writeCursor(db, jobId, entity, cursor, watermark),
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
    async listRuns(jobId, limit = 20) {
      const rows = await db
        .selectFrom('chatferry.runs')
        .selectAll()
        .where('job_id', '=', jobId)
        .orderBy('id', 'desc')
        .limit(limit)
        .execute()
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
    async saveIdMappings(jobId, kind, mappings) {
      if (mappings.length === 0) return []
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
      if (legacyIds.length === 0) return out
      const rows = await sql<{ legacy_id: string; platform_id: string }>`
        select legacy_id, platform_id from chatferry.id_map
        where job_id = ${jobId} and kind = ${kind} and legacy_id = any(${[...legacyIds]}::text[])`.execute(db)
      for (const r of rows.rows) out.set(r.legacy_id, r.platform_id)
      return out
    },
    async entityStats(jobId) {
      const items = await sql<{ entity: Entity; status: ItemStatus; done_reason: DoneReason | null; changed: boolean; n: number }>`
        select entity, status, done_reason, (status = 'done' and loaded_hash is distinct from payload_hash) as changed, count(*)::int as n
        from chatferry.items where job_id = ${jobId}
        group by 1, 2, 3, 4`.execute(db)
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
        if (!s) continue
        s.total += r.n
        s[r.status] += r.n
        if (r.status === 'done') {
          if (r.done_reason === 'already_present') s.alreadyPresent += r.n
          else s.created += r.n
          if (r.changed) s.loadedButChanged += r.n
        }
      }
      for (const r of batches.rows) {
        const s = out.get(r.entity)
        if (!s) continue
        s.requests = r.requests
        s.rateLimited = r.rate_limited
        s.batches = r.batches
        s.requestsLastMinute = r.recent
      }
      for (const r of recentItems.rows) {
        const s = out.get(r.entity)
        if (s) s.itemsLastMinute = r.n
      }
      for (const s of out.values()) s.remaining = s.planned + s.sent
      return [...out.values()]
    },
    async listRejects(jobId, filter = {}) {
      let q = db
        .selectFrom('chatferry.items')
        .select(['entity', 'legacy_id', 'target_key', 'last_error_code', 'last_error_message', 'attempts', 'updated_at'])
        .where('job_id', '=', jobId)
        .where('status', '=', 'rejected')
      if (filter.code !== undefined) q = q.where('last_error_code', '=', filter.code)
      if (filter.entity !== undefined) q = q.where('entity', '=', filter.entity)
      const rows = await q.orderBy('id').limit(filter.limit ?? 1_000_000).execute()
      return rows.map((r) => ({
        entity: r.entity as Entity,
        legacyId: r.legacy_id,
        targetKey: r.target_key,
        code: r.last_error_code,
        message: r.last_error_message,
        attempts: r.attempts,
        updatedAt: new Date(r.updated_at),
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
      if (filter.code !== undefined) q = q.where('last_error_code', '=', filter.code)
      if (filter.entity !== undefined) q = q.where('entity', '=', filter.entity)
      const r = await q.executeTakeFirst()
      return Number(r.numUpdatedRows)
    },
    async listJobs() {
      const rows = await db.selectFrom('chatferry.jobs').select(['id', 'app_id']).orderBy('id').execute()
      return rows.map((r) => ({ id: r.id, appId: r.app_id }))
    },
    close: () => database.close(),
  }
  return store
}

/** Opens the ledger at a Postgres URL or in an embedded directory, migrating it on first use. */
export async function openLedger(location: DatabaseLocation): Promise<LedgerStore> {
  const database = await openDatabase<StateDatabase>(location)
  try {
    return await createLedgerStore(database)
  } catch (err) {
    await database.close().catch(() => {})
    throw err
  }
}
