/**
 * The log of data-import requests (sandbox-only, for tests and inspection): one row per
 * authenticated data-import request (and per webhook management request, without items) with when it arrived, the endpoint, how many items it held,
 * the status answered (null when the connection was dropped), the fault injected, how many
 * items were written, and item by item what the request carried and what became of each (so a
 * test can prove what the platform *received*, not only what it holds). Rows are written in
 * batches after the answer, off the request's path; reads wait for the writes still in flight.
 */
import type { Logger } from 'pino'

import type { FaultKind } from './fault-injector.ts'
import type { SandboxDb } from './sandbox-store.ts'

/** Per-item error codes meaning "the platform already has it" (gap 3 and the muid rule). */
export const ALREADY_EXISTS_CODES: ReadonlySet<string> = new Set([
  'ERR_UID_ALREADY_EXISTS',
  'ERR_GUID_ALREADY_EXISTS',
  'ERR_ALREADY_JOINED',
  'ERR_IMPORT_MUID_ALREADY_EXISTS',
])

/**
 * What the sandbox did with one item of a request, whether or not the answer reached the client
 * (the request's `status` says that: 200 is the only answer that carries per-item results):
 * - `created`: written by this request;
 * - `exists`: refused with an "already exists" code (`ALREADY_EXISTS_CODES`);
 * - `refused`: refused with another per-item error (`code`);
 * - `unwritten`: checked and good, but not written (a partial-commit fault's left-over);
 * - `unprocessed`: the request never reached the items (429, dropped before commit, refused as a whole);
 * - `applied` (chat writes): the call changed the platform's state for this key;
 * - `unchanged` (chat writes): the call succeeded but left this key as it was (e.g. deactivating a
 *   user already deactivated).
 */
export type RequestLogItemResult = 'created' | 'exists' | 'refused' | 'unwritten' | 'unprocessed' | 'applied' | 'unchanged'

/** One item a data-import request carried, by its key as sent. */
export interface RequestLogItem {
  key: string
  result: RequestLogItemResult
  /** The per-item error code of `exists` and `refused`. */
  code?: string
}

/** One logged data-import request. */
export interface RequestLogEntry {
  appId: string
  receivedAtMs: number
  method: string
  path: string
  /**
   * users, groups, members or messages (data import); `webhooks` / `webhook-triggers` for webhook
   * management (no items); the chat writes' names (`users.update`, … `messages.delete`: CHAT_WRITE_ENDPOINTS).
   */
  endpoint: string
  /** Items in the body; null when the body was not read as an import (malformed, refused first). */
  itemCount: number | null
  /** HTTP status answered; null when the connection was dropped without an answer. */
  status: number | null
  /** Error code of a refused request. */
  code: string | null
  fault: FaultKind | null
  /** Items written to the store. */
  committed: number
  latencyMs: number
  durationMs: number
  /** The items the request carried, in body order; null when its body could not be read as an import. */
  items?: RequestLogItem[] | null
}

/** Writes and reads the request log. */
export interface RequestLog {
  add(entry: RequestLogEntry): void
  /** Entries of an app, oldest first. */
  list(appId: string, options?: { after?: number; limit?: number }): Promise<(RequestLogEntry & { id: number; items: RequestLogItem[] | null })[]>
  /** Waits for the writes in flight. */
  flush(): Promise<void>
}

/** Entries are written in batches: at most this many per INSERT, at least every FLUSH_MS. */
const BATCH = 200
const FLUSH_MS = 50

/** A request log writing to `sandbox.request_log`. */
export function createRequestLog(db: SandboxDb, logger: Logger): RequestLog {
  let buffer: RequestLogEntry[] = []
  let timer: NodeJS.Timeout | undefined
  // Batches are written one after the other, so ids follow the order requests were logged in.
  let chain: Promise<unknown> = Promise.resolve()

  function write(): void {
    if (timer !== undefined) {
      clearTimeout(timer)
    }
    timer = undefined
    if (buffer.length === 0) {
      return
    }
    const entries = buffer
    buffer = []
    chain = chain.then(() =>
      db
        .insertInto('request_log')
        .values(
          entries.map((e) => ({
            app_id: e.appId,
            received_at_ms: e.receivedAtMs,
            method: e.method,
            path: e.path,
            endpoint: e.endpoint,
            item_count: e.itemCount,
            status: e.status,
            code: e.code,
            fault: e.fault,
            committed: e.committed,
            latency_ms: e.latencyMs,
            duration_ms: e.durationMs,
            items: e.items == null ? null : JSON.stringify(e.items),
          })),
        )
        .execute()
        .catch((err: unknown) => logger.warn({ err }, 'could not write the request log')),
    )
  }

  const log: RequestLog = {
    add(e) {
      buffer.push({ ...e })
      if (buffer.length >= BATCH) {
        write()
      } else {
        timer ??= setTimeout(write, FLUSH_MS)
      }
    },
    async list(appId, options = {}) {
      await log.flush()
      const rows = await db
        .selectFrom('request_log')
        .selectAll()
        .where('app_id', '=', appId)
        .where('id', '>', options.after ?? 0)
        .orderBy('id')
        .limit(options.limit ?? 10_000)
        .execute()
      return rows.map((r) => ({
        id: Number(r.id),
        appId: r.app_id,
        receivedAtMs: Number(r.received_at_ms),
        method: r.method,
        path: r.path,
        endpoint: r.endpoint,
        itemCount: r.item_count,
        status: r.status,
        code: r.code,
        fault: r.fault as FaultKind | null,
        committed: r.committed,
        latencyMs: r.latency_ms,
        durationMs: r.duration_ms,
        items: (r.items as RequestLogItem[] | null) ?? null,
      }))
    },
    async flush() {
      write()
      await chain
    },
  }
  return log
}
