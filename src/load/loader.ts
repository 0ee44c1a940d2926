/**
 * The loader: drains a job's ledger into the platform, at the app's quota, in dependency order
 * (users → groups → members → messages, messages oldest first), surviving any crash.
 *
 * - **Packing**: planned items of the current entity are packed into full batches (≤ itemsPerRequest);
 *   each batch is a ledger row and a pg-boss job, written in one transaction; its items become
 *   `sent` *before* any request goes out.
 * - **Sending**: a process fetches batch jobs (pg-boss, SKIP LOCKED, lease = `expireInSeconds`)
 *   several at a time, claims them with fresh lease tokens, takes one slot of the app's shared
 *   quota budget per request, sends, and settles every item from its result in one transaction that
 *   also completes the pg-boss job, fenced by the token: a worker whose lease was taken over records
 *   nothing. Answers that arrive together are settled in one such transaction (each batch fenced).
 * - **Failures**: 429 pauses the whole app's budget (Retry-After / X-RateLimit-Reset); 5xx,
 *   timeouts and dropped connections are retried with jittered backoff (p-retry); then
 *   `judgeFailure` (failure-rule.ts) decides: a batch that keeps answering 500 is split in halves
 *   down to the single poison item, rejected only when the platform answered other requests
 *   meanwhile; anything transient hands the batch back. Any run of failures without a success is
 *   an outage (outage.ts): logged as it happens, and the run stops after `giveUpAfterMs`.
 * - **Stopping** (signal or fatal error): no new request starts and quota waits and backoffs are
 *   cut short, but a request in flight is awaited and its answer settled: the platform may have
 *   committed it.
 * - **Crash**: a SIGKILLed process's batches come back when their pg-boss lease expires (at once
 *   when the dead process ran on this host); re-sending is safe because "already exists" = done.
 */
import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { hostname } from 'node:os'
import { sql, type Kysely } from 'kysely'
import PQueue from 'p-queue'
import pRetry, { AbortError } from 'p-retry'
import type { Logger } from 'pino'
import type PgBoss from 'pg-boss'
import { pidAlive } from '../lib.ts'
import type { LedgerStore, EntityStats } from '../state/store.ts'
import type { StateDatabase } from '../state/schema.ts'
import type { ImportResult, PlatformClient } from '../target/client.ts'
import { PlatformError } from '../target/errors.ts'
import { ENTITIES, type Entity } from '../target/schemas.ts'
import type { LoadConfig } from './config.ts'
import { describeCause, judgeFailure } from './failure-rule.ts'
import { createOutageWatch } from './outage.ts'
import { createQuotaBudget, type QuotaBudget } from './quota-budget.ts'
import { queueJobId, startWorkQueue, type BatchJobData, type WorkQueue } from './work-queue.ts'

/** Per-item error codes that mean the platform already has the item: done, already present. */
export const ALREADY_PRESENT_CODES: ReadonlySet<string> = new Set([
  'ERR_UID_ALREADY_EXISTS',
  'ERR_GUID_ALREADY_EXISTS',
  'ERR_ALREADY_JOINED',
  'ERR_IMPORT_MUID_ALREADY_EXISTS',
])

export const LOAD_OUTCOMES = ['done', 'rejected', 'stopped', 'failed'] as const
export type LoadOutcomeStatus = (typeof LOAD_OUTCOMES)[number]

export interface LoaderOptions {
  readonly store: LedgerStore
  /** The ledger URL when on a server (pg-boss connects to it). */
  readonly stateUrl?: string
  readonly jobId: string
  readonly appId: string
  readonly client: PlatformClient
  readonly itemsPerRequest: number
  readonly requestsPerMinute: number
  /** The platform client's request timeout (the lease must outlast one request). */
  readonly timeoutMs: number
  readonly settings: LoadConfig
  readonly logger: Logger
  /** `load` returns when the ledger is drained; `worker` keeps serving until aborted. */
  readonly mode: 'load' | 'worker'
  readonly signal?: AbortSignal
  /** Called about once a second with the process's counters (for a progress line). */
  readonly onTick?: (counters: LoaderCounters) => void
}

/** What this process did. */
export interface LoaderCounters {
  requests: number
  rateLimited: number
  itemsDone: number
  itemsRejected: number
  itemsRequeued: number
  batchesSettled: number
  batchesSplit: number
  batchesReleased: number
  fenced: number
  startedAt: number
  firstRequestAt: number | undefined
}

export interface LoadOutcome {
  readonly status: LoadOutcomeStatus
  readonly counters: LoaderCounters
  readonly stats: EntityStats[]
  readonly error?: Error
}

/** A failure that no retry can fix (bad API key, wrong URL): stop the loader. */
class FatalLoadError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'FatalLoadError'
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve()
    const t = setTimeout(done, ms)
    function done() {
      clearTimeout(t)
      signal?.removeEventListener('abort', done)
      resolve()
    }
    signal?.addEventListener('abort', done, { once: true })
  })
}

/** This machine, as far as PIDs are comparable: hostname plus the kernel's boot id. */
function hostKey(): string {
  let boot = ''
  try {
    boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim().slice(0, 8)
  } catch {
    // not Linux
  }
  return `${hostname()}${boot ? `#${boot}` : ''}`
}


interface ClaimedItem {
  /** The ledger row id. */
  id: number
  key: string
  payload: string
  hash: string | null
}

interface Claim {
  batchId: number
  token: string
  entity: Entity
  items: ClaimedItem[]
  claimedAt: number
  requests: number
  rateLimited: number
  firstSentAt: number | undefined
  lastStatus: number | undefined
  lastLatencyMs: number | undefined
  lastRetryAfterMs: number | undefined
  /** When this claim's first request failed. */
  firstFailureAt: number | undefined
  /** When the batch this one was split from was split (local clock), for split halves. */
  parentSplitAt: number | undefined
}

type Settlement =
  | { kind: 'results'; result: ImportResult }
  | { kind: 'split'; code: string; message: string }
  | { kind: 'release'; code: string; message: string }

/** Runs the loader until the ledger is drained (`load`) or until aborted (`worker`). */
export async function runLoader(options: LoaderOptions): Promise<LoadOutcome> {
  const { store, jobId, appId, client, settings, logger } = options
  const db: Kysely<StateDatabase> = store.db
  const log = logger.child({ jobId, component: 'loader' })
  const host = hostKey()
  const workerId = `${host}/${process.pid}/${randomUUID().slice(0, 8)}`
  const ipr = options.itemsPerRequest
  const depth = settings.queueDepth ?? Math.max(32, settings.concurrency * 8)
  const counters: LoaderCounters = {
    requests: 0,
    rateLimited: 0,
    itemsDone: 0,
    itemsRejected: 0,
    itemsRequeued: 0,
    batchesSettled: 0,
    batchesSplit: 0,
    batchesReleased: 0,
    fenced: 0,
    startedAt: Date.now(),
    firstRequestAt: undefined,
  }
  if (settings.leaseSeconds * 1000 < options.timeoutMs + 3000) {
    throw new FatalLoadError(
      `load.leaseSeconds (${settings.leaseSeconds}) must exceed the request timeout (${options.timeoutMs} ms) by at least 3 s`,
    )
  }

  await store.ensureJob(jobId, appId)
  const stop = new AbortController()
  const onAbort = () => stop.abort(options.signal?.reason)
  options.signal?.addEventListener('abort', onAbort, { once: true })
  if (options.signal?.aborted) stop.abort()
  let fatal: Error | undefined
  /** Stops the run for `err`: no new request starts; the ones in flight finish and are settled. */
  function halt(err: Error): void {
    fatal ??= err
    stop.abort(fatal)
  }

  const queue: WorkQueue = await startWorkQueue(store.database, {
    jobId,
    leaseSeconds: settings.leaseSeconds,
    ...(options.stateUrl !== undefined ? { url: options.stateUrl } : {}),
    onError: (err) => log.warn({ err }, 'work queue error'),
  })
  const budget: QuotaBudget = await createQuotaBudget(db, {
    appId,
    requestsPerWindow: (options.requestsPerMinute * settings.quotaWindowMs) / 60_000,
    windowMs: settings.quotaWindowMs,
  })
  await db
    .insertInto('chatferry.workers')
    .values({ id: workerId, job_id: jobId, host_key: host, pid: process.pid, role: options.mode })
    .execute()
  const runId = await store.startRun(jobId, options.mode === 'load' ? 'load' : 'worker', workerId)
  log.info({ runId, workerId, concurrency: settings.concurrency, leaseSeconds: settings.leaseSeconds, slotMs: budget.intervalMs }, 'loader started')

  const watch = createOutageWatch({ giveUpAfterMs: settings.giveUpAfterMs, logger: log })

  // ─── takeover of batches held by dead processes on this host; orphan repair ─────────────────
  async function takeOverDead(): Promise<void> {
    const held = await sql<{ id: number; lease_owner: string }>`
      select id, lease_owner from chatferry.batches
      where job_id = ${jobId} and status = 'open' and lease_owner is not null and lease_expires_at > now()`.execute(db)
    const dead: number[] = []
    for (const b of held.rows) {
      const [h, pid] = b.lease_owner.split('/')
      if (h === host && Number(pid) !== process.pid && !pidAlive(Number(pid))) dead.push(Number(b.id))
    }
    if (dead.length > 0) {
      // The lease is void: the next claim bumps the token, so the dead process could not settle anyway.
      await sql`update chatferry.batches set lease_expires_at = now(), lease_owner = null where id = any(${dead}::bigint[])`.execute(db)
      await queue.boss.fail(queue.name, dead.map(queueJobId))
      log.info({ batches: dead.length }, 'took over the batches of a dead process on this host')
    }
    // A batch with no live pg-boss job (its job failed for good or was removed) goes back to planned.
    const orphans = await db.transaction().execute(async (trx) => {
      const r = await sql<{ id: number }>`
        select b.id from chatferry.batches b
        where b.job_id = ${jobId} and b.status = 'open'
          and not exists (select 1 from chatferry_boss.job j where j.name = ${queue.name}
                          and j.id = ('00000000-0000-4000-8000-' || lpad(to_hex(b.id), 12, '0'))::uuid
                          and j.state < 'completed')
        for update skip locked`.execute(trx)
      const ids = r.rows.map((x) => Number(x.id))
      if (ids.length === 0) return 0
      await sql`update chatferry.items set status = 'planned', batch_id = null, updated_at = now()
                where batch_id = any(${ids}::bigint[]) and status = 'sent'`.execute(trx)
      await sql`update chatferry.batches set status = 'abandoned', settled_at = now() where id = any(${ids}::bigint[])`.execute(trx)
      return ids.length
    })
    if (orphans > 0) log.warn({ batches: orphans }, 'batches without a queue job were planned again')
  }

  // ─── packing ─────────────────────────────────────────────────────────────────────────────────
  async function currentEntity(exec: Kysely<StateDatabase>): Promise<Entity | undefined> {
    for (const entity of ENTITIES) {
      const r = await sql<{ x: number }>`
        select 1 as x from chatferry.items where job_id = ${jobId} and entity = ${entity} and status in ('planned', 'sent') limit 1`.execute(exec)
      if (r.rows.length > 0) return entity
    }
    return undefined
  }

  /** Packs batches of the current entity up to the queue depth; returns how many. */
  async function pack(): Promise<number> {
    return db.transaction().execute(async (trx) => {
      // One packer per job at a time, across processes; the others skip.
      const lock = await sql`select id from chatferry.jobs where id = ${jobId} for update skip locked`.execute(trx)
      if (lock.rows.length === 0) return 0
      const open = await sql<{ n: number }>`
        select count(*)::int as n from chatferry.batches where job_id = ${jobId} and status = 'open'`.execute(trx)
      const want = depth - (open.rows[0]?.n ?? 0)
      if (want <= 0) return 0
      const entity = await currentEntity(trx as unknown as Kysely<StateDatabase>)
      if (entity === undefined) return 0
      const rows = await sql<{ id: number }>`
        select id from chatferry.items
        where job_id = ${jobId} and entity = ${entity} and status = 'planned'
        order by sort_key, id limit ${want * ipr}`.execute(trx)
      if (rows.rows.length === 0) return 0
      const ids = rows.rows.map((r) => Number(r.id))
      const sizes: number[] = []
      for (let i = 0; i < ids.length; i += ipr) sizes.push(Math.min(ipr, ids.length - i))
      const inserted = await sql<{ id: number }>`
        insert into chatferry.batches (job_id, entity, item_count)
        select ${jobId}, ${entity}, s from unnest(${sizes}::int[]) with ordinality as t(s, o) order by o
        returning id`.execute(trx)
      const batchIds = inserted.rows.map((r) => Number(r.id)).sort((a, b) => a - b)
      const itemBatch = ids.map((_, i) => batchIds[Math.floor(i / ipr)] as number)
      await sql`
        update chatferry.items i set status = 'sent', batch_id = v.b, updated_at = now()
        from unnest(${ids}::bigint[], ${itemBatch}::bigint[]) as v(id, b) where i.id = v.id`.execute(trx)
      await queue.boss.insert(
        batchIds.map((batchId) => ({ id: queueJobId(batchId), name: queue.name, data: { jobId, batchId } satisfies BatchJobData })),
        { db: queue.adapter(trx) },
      )
      return batchIds.length
    })
  }

  // ─── one batch ───────────────────────────────────────────────────────────────────────────────
  /** Claims the fetched batches with fresh lease tokens: two statements for all of them. Batches no longer open are absent. */
  async function claimMany(batchIds: readonly number[]): Promise<Map<number, Claim>> {
    const claims = new Map<number, Claim>()
    if (batchIds.length === 0) return claims
    const r = await sql<{ id: number; token: string; entity: Entity; parent_split_age_ms: number | null }>`
      update chatferry.batches b
      set lease_token = gen_random_uuid(), lease_owner = ${workerId},
          lease_expires_at = now() + ${settings.leaseSeconds} * interval '1 second', claims = claims + 1
      where id = any(${batchIds}::bigint[]) and job_id = ${jobId} and status = 'open'
      returning id, lease_token::text as token, entity,
        (select (extract(epoch from now() - p.settled_at) * 1000)::float8 from chatferry.batches p where p.id = b.parent_id) as parent_split_age_ms`.execute(db)
    const claimedAt = Date.now()
    for (const row of r.rows) {
      claims.set(Number(row.id), {
        batchId: Number(row.id),
        token: row.token,
        entity: row.entity,
        items: [],
        claimedAt,
        requests: 0,
        rateLimited: 0,
        firstSentAt: undefined,
        lastStatus: undefined,
        lastLatencyMs: undefined,
        lastRetryAfterMs: undefined,
        firstFailureAt: undefined,
        parentSplitAt: row.parent_split_age_ms === null ? undefined : claimedAt - Number(row.parent_split_age_ms),
      })
    }
    if (claims.size === 0) return claims
    const items = await sql<{ id: number; batch_id: number; target_key: string; payload: string; payload_hash: string | null }>`
      select id, batch_id, target_key, payload, payload_hash from chatferry.items
      where batch_id = any(${[...claims.keys()]}::bigint[]) and status = 'sent' order by batch_id, sort_key, id`.execute(db)
    for (const i of items.rows) claims.get(Number(i.batch_id))?.items.push({ id: Number(i.id), key: i.target_key, payload: i.payload, hash: i.payload_hash })
    return claims
  }

  function leaseLeftMs(c: Claim): number {
    return settings.leaseSeconds * 1000 - (Date.now() - c.claimedAt)
  }

  /** Sends one request for the claim, honouring the quota and 429s; throws PlatformError otherwise. */
  async function sendOnce(c: Claim, items: readonly ClaimedItem[]): Promise<ImportResult> {
    const body = `{${JSON.stringify(c.entity)}:{${items.map((i) => `${JSON.stringify(i.key)}:${i.payload}`).join(',')}}}`
    const keys = items.map((i) => i.key)
    for (;;) {
      await budget.take(stop.signal)
      // No new request once the run is stopping or the outage has lasted too long.
      if (watch.exceeded()) halt(new FatalLoadError(watch.giveUpMessage()))
      stop.signal.throwIfAborted()
      if (leaseLeftMs(c) < options.timeoutMs + 2000) {
        throw new AbortError(new LeaseExpiringError())
      }
      const t0 = Date.now()
      counters.firstRequestAt ??= t0
      c.firstSentAt ??= t0
      c.requests++
      counters.requests++
      try {
        const result = await client.importRaw(c.entity, keys, body)
        c.lastStatus = result.status
        c.lastLatencyMs = Date.now() - t0
        watch.success()
        return result
      } catch (err) {
        c.lastLatencyMs = Date.now() - t0
        if (!(err instanceof PlatformError)) throw err
        c.lastStatus = err.status
        if (err.status === 429) {
          c.rateLimited++
          counters.rateLimited++
          const wait = Math.min(settings.maxRetryAfterMs, err.retryAfterMs ?? budget.intervalMs * 2)
          c.lastRetryAfterMs = wait
          log.warn({ batch: c.batchId, retryAfterMs: wait }, '429: pausing the app')
          await budget.pause(wait)
          continue
        }
        if (err.retryable) {
          c.firstFailureAt ??= Date.now()
          watch.failure(describeCause(err))
          if (watch.exceeded()) halt(new FatalLoadError(watch.giveUpMessage()))
        }
        throw err
      }
    }
  }

  /**
   * Sends the claim's request with retries, then settles on what to do with it. The stop signal
   * cuts quota waits and backoffs short but never a request in flight: its answer is kept even
   * when p-retry reports the stop instead.
   */
  async function attempt(c: Claim): Promise<Settlement> {
    let answer: ImportResult | undefined
    const send = async (): Promise<ImportResult> => {
      answer = await sendOnce(c, c.items)
      return answer
    }
    try {
      const result = await pRetry(send, {
        retries: settings.maxAttempts - 1,
        randomize: true,
        factor: 2,
        minTimeout: 250,
        maxTimeout: 8000,
        signal: stop.signal,
        shouldRetry: ({ error }) => error instanceof PlatformError && error.retryable,
        onFailedAttempt: ({ error, attemptNumber, retriesLeft }) => {
          log.debug({ batch: c.batchId, attemptNumber, retriesLeft, code: (error as PlatformError).code }, 'request failed')
        },
      })
      return { kind: 'results', result }
    } catch (err) {
      if (answer !== undefined) return { kind: 'results', result: answer }
      if (err instanceof LeaseExpiringError || (err as { cause?: unknown }).cause instanceof LeaseExpiringError) {
        return { kind: 'release', code: 'LEASE_EXPIRING', message: 'the lease ran short before the request could be sent' }
      }
      if (stop.signal.aborted) {
        return fatal === undefined
          ? { kind: 'release', code: 'STOPPED', message: 'the loader was stopped' }
          : { kind: 'release', code: 'HALTED', message: fatal.message }
      }
      if (!(err instanceof PlatformError)) throw err
      const verdict = judgeFailure({
        items: c.items.length,
        kind: err.kind,
        status: err.status,
        retryable: err.retryable,
        healthyMeanwhile: watch.succeededAfter(Math.min(c.firstFailureAt ?? Date.now(), c.parentSplitAt ?? Infinity)),
      })
      if (verdict === 'stop') {
        const why = err.kind === 'http' && err.status !== undefined && err.status >= 400 ? 'the platform refused the request' : 'cannot send'
        throw new FatalLoadError(`${why}: ${err.message}`, { cause: err })
      }
      if (verdict === 'release') return { kind: 'release', code: err.code, message: err.message }
      return { kind: 'split', code: err.code, message: err.message }
    }
  }

  /** Runs `fn` in a transaction that only commits if the claim still holds its lease. */
  async function fenced(c: Claim, batchUpdate: Record<string, unknown>, fn: (trx: Kysely<StateDatabase>) => Promise<void>): Promise<boolean> {
    const ok = await db.transaction().execute(async (trx) => {
      const r = await sql`
        update chatferry.batches set
          status = ${batchUpdate.status as string},
          requests = requests + ${c.requests}, rate_limited = rate_limited + ${c.rateLimited},
          http_status = ${c.lastStatus ?? null}, latency_ms = ${c.lastLatencyMs ?? null},
          retry_after_ms = coalesce(${c.lastRetryAfterMs ?? null}, retry_after_ms),
          error_code = ${(batchUpdate.error_code as string | undefined) ?? null},
          error_message = ${(batchUpdate.error_message as string | undefined) ?? null},
          first_sent_at = coalesce(first_sent_at, ${c.firstSentAt === undefined ? null : new Date(c.firstSentAt).toISOString()}::timestamptz),
          settled_at = case when ${batchUpdate.status as string} = 'open' then settled_at else now() end,
          lease_token = case when ${batchUpdate.status as string} = 'open' then null else lease_token end,
          lease_expires_at = case when ${batchUpdate.status as string} = 'open' then null else lease_expires_at end
        where id = ${c.batchId} and lease_token = ${c.token}::uuid and lease_expires_at > now()`.execute(trx)
      if (Number(r.numAffectedRows ?? 0) !== 1) return false
      await fn(trx as unknown as Kysely<StateDatabase>)
      return true
    })
    if (!ok) {
      counters.fenced++
      log.warn({ batch: c.batchId }, 'lease lost: another worker owns this batch now; its results are not recorded here')
    }
    return ok
  }

  // Results are settled in groups: the batches whose answers arrive while a settle transaction runs
  // are settled together in the next one (each still fenced by its own token and lease), so a busy
  // process commits once per group instead of once per request.
  interface PendingSettle {
    readonly c: Claim
    readonly jobIdInQueue: string
    readonly result: ImportResult
    resolve(): void
    reject(err: unknown): void
  }
  const settleBuffer: PendingSettle[] = []
  let settling = false

  function settleResults(c: Claim, jobIdInQueue: string, result: ImportResult): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      settleBuffer.push({ c, jobIdInQueue, result, resolve, reject })
      if (!settling) void flushSettles()
    })
  }

  async function flushSettles(): Promise<void> {
    settling = true
    try {
      while (settleBuffer.length > 0) {
        const group = settleBuffer.splice(0, 64)
        try {
          await settleGroup(group)
          for (const p of group) p.resolve()
        } catch (err) {
          for (const p of group) p.reject(err)
        }
      }
    } finally {
      settling = false
    }
  }

  async function settleGroup(group: readonly PendingSettle[]): Promise<void> {
    const bIds: number[] = []
    const bTokens: string[] = []
    const bRequests: number[] = []
    const bRateLimited: number[] = []
    const bStatus: (number | null)[] = []
    const bLatency: (number | null)[] = []
    const bRetryAfter: (number | null)[] = []
    const bFirstSent: (string | null)[] = []
    const batchOf: number[] = []
    const itemIds: number[] = []
    const statuses: string[] = []
    const reasons: (string | null)[] = []
    const codes: (string | null)[] = []
    const messages: (string | null)[] = []
    const hashes: (string | null)[] = []
    const tallies = new Map<number, { done: number; rejected: number; requeued: number }>()
    for (const { c, result } of group) {
      bIds.push(c.batchId)
      bTokens.push(c.token)
      bRequests.push(c.requests)
      bRateLimited.push(c.rateLimited)
      bStatus.push(c.lastStatus ?? null)
      bLatency.push(c.lastLatencyMs ?? null)
      bRetryAfter.push(c.lastRetryAfterMs ?? null)
      bFirstSent.push(c.firstSentAt === undefined ? null : new Date(c.firstSentAt).toISOString())
      const t = { done: 0, rejected: 0, requeued: 0 }
      tallies.set(c.batchId, t)
      for (const item of c.items) {
        const r = result.results.get(item.key)
        batchOf.push(c.batchId)
        itemIds.push(item.id)
        hashes.push(item.hash)
        if (r === undefined) {
          statuses.push('planned')
          reasons.push(null)
          codes.push(null)
          messages.push(null)
          t.requeued++
        } else if (r.ok) {
          statuses.push('done')
          reasons.push('created')
          codes.push(null)
          messages.push(null)
          t.done++
        } else if (ALREADY_PRESENT_CODES.has(r.code)) {
          statuses.push('done')
          reasons.push('already_present')
          codes.push(r.code)
          messages.push(r.message)
          t.done++
        } else {
          statuses.push('rejected')
          reasons.push(null)
          codes.push(r.code)
          messages.push(r.message)
          t.rejected++
        }
      }
    }
    // One transaction: the fenced batch rows (only those still holding their token and lease),
    // their items, and their pg-boss jobs.
    const settled = await db.transaction().execute(async (trx) => {
      const r = await sql<{ id: number }>`
        with f as (
          update chatferry.batches b set
            status = 'settled', requests = b.requests + v.req, rate_limited = b.rate_limited + v.rl,
            http_status = v.hs, latency_ms = v.lat, retry_after_ms = coalesce(v.ra, b.retry_after_ms),
            error_code = null, error_message = null,
            first_sent_at = coalesce(b.first_sent_at, v.fs), settled_at = now()
          from unnest(${bIds}::bigint[], ${bTokens}::uuid[], ${bRequests}::int[], ${bRateLimited}::int[], ${bStatus}::int[],
                      ${bLatency}::int[], ${bRetryAfter}::int[], ${bFirstSent}::timestamptz[]) as v(id, tok, req, rl, hs, lat, ra, fs)
          where b.id = v.id and b.lease_token = v.tok and b.lease_expires_at > now()
          returning b.id
        ),
        u as (
          update chatferry.items i set
            status = v.st, done_reason = v.dr, last_error_code = v.code, last_error_message = v.msg,
            attempts = i.attempts + 1,
            loaded_hash = case when v.st = 'done' then v.h else i.loaded_hash end,
            batch_id = case when v.st = 'planned' then null else i.batch_id end,
            updated_at = now()
          from unnest(${batchOf}::bigint[], ${itemIds}::bigint[], ${statuses}::text[], ${reasons}::text[],
                      ${codes}::text[], ${messages}::text[], ${hashes}::text[]) as v(b, id, st, dr, code, msg, h)
          join f on f.id = v.b
          where i.id = v.id and i.job_id = ${jobId} and i.batch_id = v.b and i.status = 'sent'
          returning 1
        )
        select id from f`.execute(trx)
      const ids = new Set(r.rows.map((x) => Number(x.id)))
      const jobIds = group.filter((p) => ids.has(p.c.batchId)).map((p) => p.jobIdInQueue)
      if (jobIds.length > 0) await queue.completeMany(jobIds, trx)
      return ids
    })
    for (const { c } of group) {
      if (!settled.has(c.batchId)) {
        counters.fenced++
        log.warn({ batch: c.batchId }, 'lease lost: another worker owns this batch now; its results are not recorded here')
        continue
      }
      const t = tallies.get(c.batchId) as { done: number; rejected: number; requeued: number }
      counters.itemsDone += t.done
      counters.itemsRejected += t.rejected
      counters.itemsRequeued += t.requeued
      counters.batchesSettled++
    }
  }

  async function settleSplit(c: Claim, jobIdInQueue: string, code: string, message: string): Promise<void> {
    const ok = await fenced(c, { status: 'split', error_code: code, error_message: message }, async (trx) => {
      if (c.items.length <= 1) {
        await sql`
          update chatferry.items set status = 'rejected', last_error_code = ${code}, last_error_message = ${message},
            attempts = attempts + 1, updated_at = now()
          where batch_id = ${c.batchId} and status = 'sent'`.execute(trx)
      } else {
        const half = Math.ceil(c.items.length / 2)
        const halves = [c.items.slice(0, half), c.items.slice(half)]
        const ids: number[] = []
        for (const part of halves) {
          const b = await sql<{ id: number }>`
            insert into chatferry.batches (job_id, entity, item_count, parent_id)
            values (${jobId}, ${c.entity}, ${part.length}, ${c.batchId}) returning id`.execute(trx)
          const id = Number(b.rows[0]?.id)
          ids.push(id)
          await sql`
            update chatferry.items set batch_id = ${id}, attempts = attempts + 1, updated_at = now()
            where job_id = ${jobId} and entity = ${c.entity} and target_key = any(${part.map((p) => p.key)}::text[])
              and batch_id = ${c.batchId} and status = 'sent'`.execute(trx)
        }
        await queue.boss.insert(
          ids.map((batchId) => ({ id: queueJobId(batchId), name: queue.name, data: { jobId, batchId } satisfies BatchJobData })),
          { db: queue.adapter(trx) },
        )
      }
      await queue.boss.complete(queue.name, jobIdInQueue, {}, { db: queue.adapter(trx) })
    })
    if (ok) {
      counters.batchesSplit++
      if (c.items.length <= 1) counters.itemsRejected += c.items.length
      log.info({ batch: c.batchId, items: c.items.length, code }, c.items.length <= 1 ? 'poison item rejected' : 'batch split in halves')
    }
  }

  async function release(c: Claim, jobIdInQueue: string, code: string, message: string): Promise<void> {
    const ok = await fenced(c, { status: 'open', error_code: code, error_message: message }, async (trx) => {
      await queue.boss.fail(queue.name, jobIdInQueue, { code, message }, { db: queue.adapter(trx) })
    })
    if (ok) counters.batchesReleased++
  }

  async function processJob(job: PgBoss.Job<BatchJobData>, c: Claim | undefined): Promise<void> {
    if (c === undefined) {
      // Settled already (the pg-boss job outlived it): nothing to send.
      await queue.boss.complete(queue.name, job.id)
      return
    }
    if (c.items.length === 0) {
      await fenced(c, { status: 'settled' }, async (trx) => {
        await queue.boss.complete(queue.name, job.id, {}, { db: queue.adapter(trx) })
      })
      return
    }
    let outcome: Settlement
    try {
      outcome = await attempt(c)
    } catch (err) {
      await release(c, job.id, 'FATAL', (err as Error).message).catch(() => {})
      throw err
    }
    if (outcome.kind === 'results') await settleResults(c, job.id, outcome.result)
    else if (outcome.kind === 'split') await settleSplit(c, job.id, outcome.code, outcome.message)
    else await release(c, job.id, outcome.code, outcome.message)
  }

  // ─── the dispatch loop ──────────────────────────────────────────────────────────────────────
  const lanes = new PQueue({ concurrency: settings.concurrency })
  const heartbeat = setInterval(() => {
    void db
      .updateTable('chatferry.workers')
      .set({ heartbeat_at: sql`now()` as never })
      .where('id', '=', workerId)
      .execute()
      .catch(() => {})
    void store.heartbeatRun(runId, counters).catch(() => {})
  }, 5000)
  const ticker = options.onTick ? setInterval(() => options.onTick?.(counters), 1000) : undefined

  async function drained(): Promise<boolean> {
    const r = await sql`select 1 from chatferry.items where job_id = ${jobId} and status in ('planned', 'sent') limit 1`.execute(db)
    return r.rows.length === 0
  }

  let status: LoadOutcomeStatus = 'stopped'
  try {
    await takeOverDead()
    let idle = 0
    let lastMaintenance = Date.now()
    // A process holds up to twice its concurrency in batches: the running ones and as many claimed
    // ahead, fetched and claimed together whenever half of them are done (not once per batch).
    const holdMax = settings.concurrency * 2
    while (!stop.signal.aborted && fatal === undefined) {
      // Checked while the lanes wait in backoffs too: the give-up must not wait for the next failure.
      if (watch.exceeded()) {
        halt(new FatalLoadError(watch.giveUpMessage()))
        break
      }
      if (lanes.size + lanes.pending > holdMax - Math.max(1, Math.floor(holdMax / 2))) {
        await Promise.race([new Promise<void>((resolve) => lanes.addEventListener('next', () => resolve(), { once: true })), sleep(250, stop.signal)])
        continue
      }
      const free = holdMax - lanes.pending - lanes.size
      let jobs = await queue.boss.fetch<BatchJobData>(queue.name, { batchSize: free })
      if (jobs.length === 0) {
        await pack()
        jobs = await queue.boss.fetch<BatchJobData>(queue.name, { batchSize: free })
      }
      if (jobs.length === 0) {
        if (lanes.pending === 0 && options.mode === 'load' && (await drained())) {
          status = 'done'
          break
        }
        idle++
        if (Date.now() - lastMaintenance > 5000) {
          lastMaintenance = Date.now()
          await takeOverDead()
        }
        await sleep(Math.min(500, 50 * idle), stop.signal)
        continue
      }
      idle = 0
      let claims: Map<number, Claim>
      try {
        claims = await claimMany(jobs.map((j) => j.data.batchId))
      } catch (err) {
        // The fetched jobs stay active in pg-boss until their lease expires, then come back.
        log.error({ err, batches: jobs.map((j) => j.data.batchId) }, 'claiming batches failed; they will be retried')
        watch.failure(`the ledger: ${(err as Error).message}`)
        await sleep(250, stop.signal)
        continue
      }
      for (const job of jobs) {
        const c = claims.get(job.data.batchId)
        lanes
          .add(() => processJob(job, c))
          .catch((err: unknown) => {
            if (err instanceof FatalLoadError) halt(err)
            else {
              log.error({ err, batch: job.data.batchId }, 'batch failed; it will be retried')
              watch.failure(`the ledger: ${(err as Error).message}`)
            }
          })
      }
      // Keep the queue ahead of the senders.
      if (Math.random() < 0.2) void pack().catch((err: unknown) => log.warn({ err }, 'packing failed'))
    }
    await lanes.onIdle()
  } catch (err) {
    fatal ??= err as Error
  } finally {
    clearInterval(heartbeat)
    if (ticker) clearInterval(ticker)
    options.signal?.removeEventListener('abort', onAbort)
    await lanes.onIdle().catch(() => {})
  }

  const stats = await store.entityStats(jobId)
  if (fatal !== undefined) status = 'failed'
  else if (status === 'done' && stats.some((s) => s.rejected > 0)) status = 'rejected'
  await store
    .finishRun(runId, status === 'done' ? 'succeeded' : status === 'stopped' ? 'interrupted' : status, { counters, stats }, fatal?.message)
    .catch(() => {})
  await db.deleteFrom('chatferry.workers').where('id', '=', workerId).execute().catch(() => {})
  await queue.stop().catch(() => {})
  options.onTick?.(counters)
  log.info({ status, ...counters }, 'loader finished')
  return { status, counters, stats, ...(fatal !== undefined ? { error: fatal } : {}) }
}

class LeaseExpiringError extends Error {
  constructor() {
    super('the lease ran short before the request could be sent')
    this.name = 'LeaseExpiringError'
  }
}

/** @internal */
export { FatalLoadError }
