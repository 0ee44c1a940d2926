/**
 * Read-only access to an embedded ledger another chatferry process holds. PGlite is one database
 * in one process: a second PGlite on the same directory would corrupt it. So the process that
 * holds the embedded store (its lock file) answers the read-only questions of `status`, `rejects`
 * and `runs` on a Unix socket next to the lock, through its own store — a tiny protocol of one
 * JSON line per request and per answer, with a fixed list of operations that only read. Nothing on
 * the socket can write, and a query waits its turn on the holder's single connection like the
 * holder's own queries do, so it never lands inside one of the holder's transactions.
 */
import { createHash } from 'node:crypto'
import { chmodSync, rmSync } from 'node:fs'
import { createConnection, createServer, type Server, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'

import type { EntityStats, LedgerStore, RejectRecord, RunRecord, UpdateCountRow } from '../state/index.ts'
import type { UpdateReject } from '../state/update-lane-ledger.ts'
import type { Entity } from '../target/schemas.ts'

/** What the read-only commands read from the ledger: the same methods as {@link LedgerStore}'s. */
export interface LedgerReader {
  listJobs(): Promise<{ id: string; appId: string }[]>
  entityStats(jobId: string): Promise<EntityStats[]>
  listRejects(jobId: string, filter?: { code?: string; entity?: Entity; limit?: number }): Promise<RejectRecord[]>
  listRuns(jobId: string, limit?: number): Promise<RunRecord[]>
  /** Messages still to send, per minute of `sentAt` (`status`'s retention-edge warning). */
  openMessagesPerMinute(jobId: string): Promise<[number, number][]>
  /** Updates of loaded items the platform refused (`rejects`). */
  listUpdateRejects(jobId: string, filter?: { code?: string; entity?: string; limit?: number }): Promise<UpdateReject[]>
  /** The job's updates per entity, kind, policy and status (`status`). */
  updateCounts(jobId: string): Promise<UpdateCountRow[]>
}

const OPERATIONS = [
  'listJobs',
  'entityStats',
  'listRejects',
  'listRuns',
  'openMessagesPerMinute',
  'listUpdateRejects',
  'updateCounts',
] as const satisfies readonly (keyof LedgerReader)[]
type Operation = (typeof OPERATIONS)[number]

/** The fields of the answers that are dates (JSON carries them as ISO strings). */
const DATE_FIELDS = new Set(['startedAt', 'heartbeatAt', 'finishedAt', 'updatedAt', 'settledAt'])

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

/** The store's read-only operations, and nothing else. */
export function readerOf(store: LedgerStore): LedgerReader {
  return {
    listJobs: () => store.listJobs(),
    entityStats: (jobId) => store.entityStats(jobId),
    listRejects: (jobId, filter) => store.listRejects(jobId, filter),
    listRuns: (jobId, limit) => store.listRuns(jobId, limit),
    openMessagesPerMinute: (jobId) => store.statusLookups.openMessagesPerMinute(jobId),
    listUpdateRejects: (jobId, filter) => store.updateLane.rejects(jobId, filter),
    updateCounts: (jobId) => store.updatePlan.counts(jobId),
  }
}

/** Answers read-only queries on `path` until the returned function is called. */
export async function serveReadSocket(reader: LedgerReader, path: string): Promise<() => Promise<void>> {
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

/** A {@link LedgerReader} over the socket of the process holding the store; `close` hangs up. */
export async function connectReadSocket(path: string): Promise<LedgerReader & { close(): void }> {
  const socket = createConnection(path)
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve)
    socket.once('error', reject)
  })
  const pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>()
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
    const answer = JSON.parse(line, (k, v: unknown) => (DATE_FIELDS.has(k) && typeof v === 'string' ? new Date(v) : v)) as {
      id: number
      ok: boolean
      result?: unknown
      error?: string
    }
    const p = pending.get(answer.id)
    pending.delete(answer.id)
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
        pending.set(id, { resolve: resolve as (v: unknown) => void, reject })
        socket.write(`${JSON.stringify({ id, op, args: args.filter((a) => a !== undefined) })}\n`)
      })
  return {
    listJobs: call('listJobs'),
    entityStats: call('entityStats'),
    listRejects: call('listRejects'),
    listRuns: call('listRuns'),
    openMessagesPerMinute: call('openMessagesPerMinute'),
    listUpdateRejects: call('listUpdateRejects'),
    updateCounts: call('updateCounts'),
    close: () => socket.destroy(),
  }
}
