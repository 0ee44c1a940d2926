/**
 * Helpers of the update-lane tests: the chat writes the sandbox *received* (its request log, one
 * `endpoint key` string per key of each chat-write request, with the outcome), the update lane run
 * in-process against a sandbox app, and the ledger's updates as rows.
 */
import { sql } from 'kysely'
import { pino } from 'pino'

import { createChatBudget } from '../../src/load/chat-budget.ts'
import { type LoadConfig, resolveLoadConfig } from '../../src/load/config.ts'
import { runUpdateLane, type UpdateLaneOutcome } from '../../src/load/update-lane.ts'
import { CHAT_WRITE_ENDPOINTS } from '../../src/sandbox/chat-write-route.ts'
import type { Sandbox } from '../../src/sandbox/index.ts'
import { inspectLedger } from '../../src/state/inspect-ledger.ts'
import type { LedgerStore } from '../../src/state/store.ts'
import { createPlatformClient } from '../../src/target/client.ts'

/** One key of one chat-write request the sandbox received: `users.update alice`, with its outcome. */
export interface ReceivedWrite {
  readonly call: string
  readonly result: string | undefined
  readonly status: number | null
}

/** Every chat write the sandbox received for the app, in arrival order (reads are left out). */
export async function receivedWrites(sb: Sandbox, appId: string): Promise<ReceivedWrite[]> {
  await sb.whenIdle()
  const writes = new Set<string>(CHAT_WRITE_ENDPOINTS)
  return (await sb.requests(appId))
    .filter((r) => writes.has(r.endpoint))
    .flatMap((r) => (r.items ?? []).map((i) => ({ call: `${r.endpoint} ${i.key}`, result: i.result, status: r.status })))
}

/** The calls that were received more than once (a duplicate is an update applied twice). */
export function duplicates(writes: readonly ReceivedWrite[]): string[] {
  const seen = new Map<string, number>()
  for (const w of writes) {
    seen.set(w.call, (seen.get(w.call) ?? 0) + 1)
  }
  return [...seen].filter(([, n]) => n > 1).map(([c, n]) => `${c} ×${n}`)
}

export interface LaneRunOptions {
  readonly store: LedgerStore
  readonly jobId: string
  readonly appId: string
  readonly baseUrl: string
  readonly apiKey: string
  readonly chatRequestsPerMinute?: number
  /** The client's request timeout. @default 3000 */
  readonly timeoutMs?: number
  readonly settings?: Partial<LoadConfig>
  readonly legacyMetadataKey?: string
  readonly signal?: AbortSignal
}

/** Runs the update lane in-process until it has nothing left (`load` mode). */
export async function runLaneOnce(o: LaneRunOptions): Promise<UpdateLaneOutcome> {
  const budget = await createChatBudget(o.store.quota, { appId: o.appId, requestsPerMinute: o.chatRequestsPerMinute ?? 6000 })
  return runUpdateLane({
    store: o.store,
    jobId: o.jobId,
    client: createPlatformClient({ baseUrl: o.baseUrl, apiKey: o.apiKey, timeoutMs: o.timeoutMs ?? 3000 }),
    budget,
    settings: resolveLoadConfig({ leaseSeconds: 10, ...o.settings }, {}, {}),
    timeoutMs: o.timeoutMs ?? 3000,
    legacyMetadataKey: o.legacyMetadataKey ?? 'legacy',
    logger: pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }),
    mode: 'load',
    ...(o.signal ? { signal: o.signal } : {}),
  })
}

/** The job's updates: kind, target key, status, error code, http status, in id order. */
export async function ledgerUpdates(
  store: LedgerStore,
  jobId: string,
): Promise<{ kind: string; target_key: string; status: string; error_code: string | null; http_status: number | null }[]> {
  return (
    await sql<{ kind: string; target_key: string; status: string; error_code: string | null; http_status: number | null }>`
      select kind, target_key, status, error_code, http_status from chatferry.updates where job_id = ${jobId} order by id`.execute(
      inspectLedger(store),
    )
  ).rows
}

/** The platform ids of the job's messages, by muid. */
export async function messageIds(sb: Sandbox, appId: string): Promise<Map<string, string>> {
  const r = await sql<{ muid: string; id: number }>`select muid, id from sandbox.messages where app_id = ${appId}`.execute(sb.store)
  return new Map(r.rows.map((row) => [row.muid, String(row.id)]))
}
