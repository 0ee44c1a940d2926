/**
 * Read-only access to an embedded ledger another chatferry process holds. PGlite is one database
 * in one process: a second PGlite on the same directory would corrupt it. So the process that
 * holds the embedded store (its lock file) answers the questions of `status`, `rejects`, `runs`
 * and `plan` on a Unix socket next to the lock, through its own store — a tiny protocol of one
 * JSON line per request and per answer, with a fixed list of operations. Every one only reads but
 * `savePlanReport`, which appends `plan`'s report (checked against the report schema) as one new
 * row of `chatferry.reports`, as `plan` does on a store it holds itself, and the three operations of
 * the app's shared chat budget (`chatBudgetEnsure`, `chatBudgetReserve`, `chatBudgetPause`, on a
 * `<appId>#chat` row only: src/load/chat-budget.ts), through which `plan --check-target` paces its
 * chat reads with every other process: nothing else on the socket changes or deletes a row. A query waits its turn on the holder's single connection like the
 * holder's own queries do, so it never lands inside one of the holder's transactions.
 */
import { createHash } from 'node:crypto'
import { chmodSync, rmSync } from 'node:fs'
import { createConnection, createServer, type Server, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'

import { PlanReport } from '../report/schema.ts'
import type { AcceptedReject } from '../state/accepted-rejects-ledger.ts'
import type { FileCounts, FileRow, IdMapRow, KnownItemRow, LoadedItemRow, LookupItemRow, UpdateConflict, UpdateCountRow } from '../state/index.ts'
import type { QuotaLedger } from '../state/quota-ledger.ts'
import type { EntityStats, LedgerStore, RejectRecord, RunRecord } from '../state/store.ts'
import type { UpdateReject } from '../state/update-lane-ledger.ts'
import type { Entity } from '../target/schemas.ts'

/** What the read-only commands read from the ledger: the same methods as {@link LedgerStore}'s. */
export interface LedgerReader {
  listJobs(): Promise<{ id: string; appId: string }[]>
  entityStats(jobId: string): Promise<EntityStats[]>
  listRejects(jobId: string, filter?: { code?: string; entity?: Entity; limit?: number }): Promise<RejectRecord[]>
  /** The rejects an operator accepted, with who, when and why (`rejects --accepted`). */
  listAcceptedRejects(jobId: string, filter?: { code?: string; entity?: Entity; limit?: number }): Promise<AcceptedReject[]>
  listRuns(jobId: string, limit?: number): Promise<RunRecord[]>
  /** Messages still to send, per minute of `sentAt` (`status`'s retention-edge warning). */
  openMessagesPerMinute(jobId: string): Promise<[number, number][]>
  /** Updates of loaded items the platform refused (`rejects`). */
  listUpdateRejects(jobId: string, filter?: { code?: string; entity?: string; limit?: number }): Promise<UpdateReject[]>
  /** The job's updates per entity, kind, policy and status (`status`). */
  updateCounts(jobId: string): Promise<UpdateCountRow[]>
  /** Updates held back because their item changed on the platform (`status`). */
  updateConflicts(jobId: string, args: { limit: number; withDropped: boolean }): Promise<UpdateConflict[]>
  /** The files lane's files by state, bytes and the messages waiting on them (`status`, `files`). */
  fileCounts(jobId: string): Promise<FileCounts>
  /** The job's files a page at a time (`files map`, `files failures`). */
  listFiles(jobId: string, filter?: { states?: readonly string[]; afterId?: number; limit?: number }): Promise<FileRow[]>
}

/**
 * What `plan` asks the holder: the dry run's ledger reads (the same as a dry-run session's,
 * src/state/dry-run-ledger.ts), the job's previous report, and keeping its own report.
 */
export interface PlanAsks {
  idMap(jobId: string): Promise<IdMapRow[]>
  lookupItems(jobId: string, entity: 'users' | 'groups'): Promise<LookupItemRow[]>
  knownItems(jobId: string, entity: string, keys: readonly string[], hashes: readonly string[]): Promise<KnownItemRow[]>
  /** Loaded items of these legacy ids (records a policy now skips: what a delta would remove). */
  loadedItems(jobId: string, entity: string, legacyIds: readonly string[]): Promise<LoadedItemRow[]>
  latestReport(jobId: string, kind: 'plan' | 'verify'): Promise<unknown>
  /** Appends a plan report (one new row of `chatferry.reports`); refused unless it is one. */
  savePlanReport(report: unknown): Promise<void>
  /** The app's chat budget row (`<appId>#chat`; any other row is refused): `QuotaLedger.ensure`, `reserve`, `pause`. */
  chatBudgetEnsure: QuotaLedger['ensure']
  chatBudgetReserve: QuotaLedger['reserve']
  chatBudgetPause: QuotaLedger['pause']
}

/** Everything the holder answers. */
export type LedgerAnswers = LedgerReader & PlanAsks

const OPERATIONS = [
  'listJobs',
  'entityStats',
  'listRejects',
  'listAcceptedRejects',
  'listRuns',
  'openMessagesPerMinute',
  'listUpdateRejects',
  'updateCounts',
  'updateConflicts',
  'fileCounts',
  'listFiles',
  'idMap',
  'lookupItems',
  'knownItems',
  'loadedItems',
  'latestReport',
  'savePlanReport',
  'chatBudgetEnsure',
  'chatBudgetReserve',
  'chatBudgetPause',
] as const satisfies readonly (keyof LedgerAnswers)[]
type Operation = (typeof OPERATIONS)[number]

/** The operations whose answers carry dates, and those fields (JSON carries them as ISO strings). */
const DATED_OPERATIONS: ReadonlySet<Operation> = new Set(['listRuns', 'listRejects', 'listAcceptedRejects', 'listUpdateRejects', 'updateConflicts'])
const DATE_FIELDS = new Set(['startedAt', 'heartbeatAt', 'finishedAt', 'updatedAt', 'settledAt', 'acceptedAt'])

/**
 * Where the holder of the embedded store in `dir` listens. A Unix socket path is limited to about
 * 100 bytes: a deeper directory gets a socket in the temporary directory named by its hash.
 */
export function readSocketPath(dir: string): string {
  const beside = join(dir, 'chatferry.sock')
  if (Buffer.byteLength(beside) < 100) {
    return beside
  }
  return join(tmpdir(), `chatferry-${createHash('sha256').update(dir).digest('hex').slice(0, 16)}.sock`)
}

/** The store's read-only operations and the plan report's append, and nothing else. */
export function readerOf(store: LedgerStore): LedgerAnswers {
  return {
    listJobs: () => store.listJobs(),
    entityStats: (jobId) => store.entityStats(jobId),
    listRejects: (jobId, filter) => store.listRejects(jobId, filter),
    listAcceptedRejects: (jobId, filter) => store.acceptedRejects.list(jobId, filter),
    listRuns: (jobId, limit) => store.listRuns(jobId, limit),
    openMessagesPerMinute: (jobId) => store.statusLookups.openMessagesPerMinute(jobId),
    listUpdateRejects: (jobId, filter) => store.updateLane.rejects(jobId, filter),
    updateCounts: (jobId) => store.updatePlan.counts(jobId),
    updateConflicts: (jobId, args) => store.platformEvents.heldBack(jobId, args),
    fileCounts: (jobId) => store.files.counts(jobId),
    listFiles: (jobId, filter) => store.files.list(jobId, filter),
    idMap: (jobId) => store.planLookups.idMap(jobId),
    lookupItems: (jobId, entity) => store.planLookups.items(jobId, entity === 'groups' ? 'groups' : 'users'),
    knownItems: (jobId, entity, keys, hashes) => store.planLookups.knownItems(jobId, entity, keys, hashes),
    loadedItems: (jobId, entity, legacyIds) => store.planLookups.loadedItems(jobId, entity, legacyIds),
    latestReport: (jobId, kind) => store.reports.latest(jobId, kind === 'verify' ? 'verify' : 'plan'),
    savePlanReport: async (report) => {
      const parsed = PlanReport.safeParse(report)
      if (!parsed.success) {
        throw new Error(`not a plan report: ${parsed.error.issues[0]?.message ?? 'invalid'}`)
      }
      // As sent (a newer plan may carry fields this version's schema does not name).
      await store.reports.save('plan', report as PlanReport)
    },
    chatBudgetEnsure: (key) => store.quota.ensure(chatRow(key)),
    chatBudgetReserve: (key, n, intervalMs, maxAheadMs) => store.quota.reserve(chatRow(key), n, intervalMs, maxAheadMs),
    chatBudgetPause: (key, ms) => store.quota.pause(chatRow(key), ms),
  }
}

/** The socket reaches chat budget rows only (`<appId>#chat`), never an import budget. */
function chatRow(key: string): string {
  if (typeof key !== 'string' || !key.endsWith('#chat')) {
    throw new Error(`not a chat budget row: ${String(key)}`)
  }
  return key
}

/** Answers the operations of {@link LedgerAnswers} on `path` until the returned function is called. */
export async function serveReadSocket(reader: LedgerAnswers, path: string): Promise<() => Promise<void>> {
  rmSync(path, { force: true })
  const open = new Set<Socket>()
  const server: Server = createServer((socket) => {
    open.add(socket)
    socket.on('close', () => open.delete(socket))
    socket.on('error', () => {})
    const lines = createInterface({ input: socket })
    lines.on('error', () => {})
    lines.on('line', (line) => {
      let id: unknown = null
      void (async () => {
        try {
          const req = JSON.parse(line) as { id: unknown; op: unknown; args: unknown }
          id = req.id
          if (!(OPERATIONS as readonly unknown[]).includes(req.op) || !Array.isArray(req.args)) {
            throw new Error(`not a read-only ledger operation: ${String(req.op)}`)
          }
          const fn = reader[req.op as Operation] as (...a: unknown[]) => Promise<unknown>
          const result = await fn(...(req.args as unknown[]))
          socket.write(`${JSON.stringify({ id, ok: true, result })}\n`)
        } catch (err) {
          socket.write(`${JSON.stringify({ id, ok: false, error: err instanceof Error ? err.message : String(err) })}\n`)
        }
      })()
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(path, () => (server.off('error', reject), resolve()))
  })
  server.unref()
  // The ledger holds personal data: only the holder's user may ask.
  chmodSync(path, 0o600)
  return async () => {
    // A reader still connected must not keep the holder from ending: hang up on it.
    const closed = new Promise<void>((resolve) => server.close(() => resolve()))
    for (const socket of open) {
      socket.destroy()
    }
    await closed
    rmSync(path, { force: true })
  }
}

/** {@link LedgerAnswers} over the socket of the process holding the store; `close` hangs up. */
export async function connectReadSocket(path: string): Promise<LedgerAnswers & { close(): void }> {
  const socket = createConnection(path)
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve)
    socket.once('error', reject)
  })
  const pending = new Map<number, { op: Operation; resolve(v: unknown): void; reject(e: Error): void }>()
  let next = 1
  const fail = (err: Error) => {
    for (const p of pending.values()) {
      p.reject(err)
    }
    pending.clear()
  }
  socket.on('error', fail)
  socket.on('close', () => fail(new Error('the chatferry process holding the embedded store closed the connection')))
  // readline passes the socket's errors on: they are the socket's, handled above.
  const answers = createInterface({ input: socket })
  answers.on('error', () => {})
  answers.on('line', (line) => {
    const answer = JSON.parse(line) as { id: number; ok: boolean; result?: unknown; error?: string }
    const p = pending.get(answer.id)
    pending.delete(answer.id)
    if (p !== undefined && DATED_OPERATIONS.has(p.op)) {
      answer.result = withDates(answer.result)
    }
    if (answer.ok) {
      p?.resolve(answer.result)
    } else {
      p?.reject(new Error(answer.error ?? 'the ledger query failed'))
    }
  })
  const call =
    <T>(op: Operation) =>
    (...args: unknown[]) =>
      new Promise<T>((resolve, reject) => {
        if (socket.destroyed) {
          reject(new Error('the connection to the chatferry process holding the embedded store is closed'))
          return
        }
        const id = next++
        pending.set(id, { op, resolve: resolve as (v: unknown) => void, reject })
        socket.write(`${JSON.stringify({ id, op, args: args.filter((a) => a !== undefined) })}\n`)
      })
  return {
    listJobs: call('listJobs'),
    entityStats: call('entityStats'),
    listRejects: call('listRejects'),
    listAcceptedRejects: call('listAcceptedRejects'),
    listRuns: call('listRuns'),
    openMessagesPerMinute: call('openMessagesPerMinute'),
    listUpdateRejects: call('listUpdateRejects'),
    updateCounts: call('updateCounts'),
    updateConflicts: call('updateConflicts'),
    fileCounts: call('fileCounts'),
    listFiles: call('listFiles'),
    idMap: call('idMap'),
    lookupItems: call('lookupItems'),
    knownItems: call('knownItems'),
    loadedItems: call('loadedItems'),
    latestReport: call('latestReport'),
    savePlanReport: call('savePlanReport'),
    chatBudgetEnsure: call('chatBudgetEnsure'),
    chatBudgetReserve: call('chatBudgetReserve'),
    chatBudgetPause: call('chatBudgetPause'),
    close: () => socket.destroy(),
  }
}

/** The answer's date fields (one level into each row) as dates. */
function withDates(result: unknown): unknown {
  if (!Array.isArray(result)) {
    return result
  }
  return result.map((row: unknown) => {
    if (row === null || typeof row !== 'object') {
      return row
    }
    const out: Record<string, unknown> = { ...(row as Record<string, unknown>) }
    for (const k of DATE_FIELDS) {
      if (typeof out[k] === 'string') {
        out[k] = new Date(out[k])
      }
    }
    return out
  })
}
