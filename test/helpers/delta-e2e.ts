/**
 * Helpers of the end-to-end delta tests: the ledger's target keys of legacy rows, and what a run
 * sent (imports by key, chat writes by call) from the sandbox's request log after a point.
 */
import { sql } from 'kysely'

import { CHAT_WRITE_ENDPOINTS } from '../../src/sandbox/chat-write-route.ts'
import type { Sandbox } from '../../src/sandbox/index.ts'
import { inspectLedger } from '../../src/state/inspect-ledger.ts'
import { openLedger } from '../../src/state/store.ts'

/** The target key (and platform id) of each legacy id of an entity, from the job's ledger (its loaded item when it has several, e.g. a skip's placeholder). */
export async function ledgerKeys(stateUrl: string, jobId: string, entity: string): Promise<Map<string, { key: string; platformId: string | null }>> {
  const store = await openLedger({ url: stateUrl, poolSize: 1 })
  try {
    const r = await sql<{ l: string; k: string; p: string | null }>`
      select legacy_id as l, target_key as k, platform_id as p from chatferry.items where job_id = ${jobId} and entity = ${entity}
      order by status = 'done', id`.execute(inspectLedger(store))
    return new Map(r.rows.map((row) => [row.l, { key: row.k, platformId: row.p }]))
  } finally {
    await store.close()
  }
}

/** What the sandbox received after request `after` (its id): imports as `entity key` (items created), chat writes as `endpoint key`. */
export async function receivedSince(sb: Sandbox, appId: string, after: number): Promise<{ imports: string[]; writes: string[] }> {
  await sb.whenIdle()
  const writes = new Set<string>(CHAT_WRITE_ENDPOINTS)
  const imports: string[] = []
  const calls: string[] = []
  for (const r of (await sb.requests(appId)).filter((x) => x.id > after)) {
    for (const i of r.items ?? []) {
      if (writes.has(r.endpoint)) {
        calls.push(`${r.endpoint} ${i.key}`)
      } else if (['users', 'groups', 'members', 'messages'].includes(r.endpoint) && i.result === 'created') {
        imports.push(`${r.endpoint} ${i.key}`)
      }
    }
  }
  return { imports: imports.sort(), writes: calls.sort() }
}

/** The id of the newest request the sandbox logged for the app (0 when none). */
export async function lastRequestId(sb: Sandbox, appId: string): Promise<number> {
  await sb.whenIdle()
  const all = await sb.requests(appId)
  return all.length === 0 ? 0 : Math.max(...all.map((r) => r.id))
}

/**
 * The rows of `after` that differ from `before` (or are new or gone), as `entity key` strings:
 * what a delta touched on the platform, to compare with what it was meant to touch.
 */
export function touchedRows(
  before: Record<string, { key: string; row: Record<string, unknown> }[]>,
  after: Record<string, { key: string; row: Record<string, unknown> }[]>,
): string[] {
  const out: string[] = []
  for (const entity of Object.keys(after)) {
    const old = new Map((before[entity] ?? []).map((r) => [r.key, JSON.stringify(r.row)]))
    const now = new Map((after[entity] ?? []).map((r) => [r.key, JSON.stringify(r.row)]))
    for (const [key, row] of now) {
      if (old.get(key) !== row) {
        out.push(`${entity} ${key}`)
      }
    }
    for (const key of old.keys()) {
      if (!now.has(key)) {
        out.push(`${entity} ${key} (gone)`)
      }
    }
  }
  return out.sort()
}
