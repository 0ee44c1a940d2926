/**
 * The delivery audit: what the platform *received*, read from the sandbox's request log (every
 * data-import request, the keys it carried and what the sandbox did with each), checked against
 * the ledger. "Every key is present once in the sandbox" cannot fail (the sandbox's unique keys
 * guarantee it); these checks can:
 *
 * (a) every item the ledger calls done was *created* exactly once (accepted at most once, and
 *     present); one the ledger calls `created` was created by a request whose 200 answer said so,
 *     or by a message request answered with the bad-row 500, which the loader reads back;
 *     a rejected item was never created; nothing was created that the ledger does not hold.
 * (b) re-sends are bounded. A key carried by a request after an earlier request of it was
 *     *answered* (HTTP 200 with a per-item result: created, exists or refused) is an **unexplained
 *     re-send**: the loader had the answer and sent the item again anyway. The only legitimate cause
 *     is a loader killed between the answer and its settlement (or before the answer came), so they
 *     number at most `kills × inFlightCapacity(concurrency)`, and zero without a kill. A re-send
 *     after a request that gave no per-item answer (429, 5xx, a dropped connection, a refusal as a
 *     whole, or a 200 that took longer than the loader's timeout) is explained: the loader could
 *     not know; such re-sends are bounded by construction by the sends that got no answer (a key
 *     is re-sent, explained, at most once per unanswered send of it). An "already exists" answer to the first
 *     request that carried a key means something else created it: a violation too.
 * (c) nothing lost: every planned item ends done, rejected or skipped, and every done item's key is
 *     in the sandbox.
 *
 * `audit` returns the violations with their keys (readable in a failure message) and the counts.
 */
import { type Kysely, sql } from 'kysely'

import { CHAT_WRITE_ENDPOINTS } from '../../src/sandbox/chat-write-route.ts'
import type { Sandbox } from '../../src/sandbox/index.ts'
import type { RequestLogItem, RequestLogItemResult } from '../../src/sandbox/request-log.ts'
import { ENTITIES, type Entity } from '../../src/target/schemas.ts'
import { sandboxKeys } from './loader-harness.ts'

/**
 * The most items one loader process can have sent without their settlement being committed: the
 * loader runs `load.concurrency` lanes (p-queue, src/load/loader.ts), and a lane holds its batch
 * from the claim through the request to the settlement transaction. It claims up to
 * `2 × concurrency` batches ahead (`holdMax`), but the extra ones are only queued, never sent
 * before a lane takes them, so a kill loses at most `concurrency` answered-or-in-flight requests
 * of at most `itemsPerRequest` items each.
 */
export function inFlightCapacity(concurrency: number, itemsPerRequest = 50): number {
  return concurrency * itemsPerRequest
}

export type ViolationKind =
  | 'created-twice'
  | 'done-never-created'
  | 'created-without-answer'
  | 'rejected-but-created'
  | 'created-unplanned'
  | 'exists-on-first-send'
  | 'resent-beyond-bound'
  | 'not-finished'
  | 'done-not-in-sandbox'

export interface Violation {
  readonly kind: ViolationKind
  readonly entity: Entity
  readonly keys: readonly string[]
  readonly detail: string
}

export interface AuditStats {
  readonly requests: number
  /** Item sends over all requests (one key in one request = one send). */
  readonly sends: number
  /** Sends of a key that an earlier request had carried already. */
  readonly resends: number
  /** Of them, sends after an earlier request had answered the key (see (b)). */
  readonly unexplainedResends: number
  /** "Already exists" answers. */
  readonly existsAnswers: number
  /** The bound on unexplained re-sends: kills × in-flight capacity. */
  readonly bound: number
}

export interface AuditReport {
  readonly violations: readonly Violation[]
  readonly stats: AuditStats
}

export interface AuditOptions {
  readonly sb: Sandbox
  readonly appId: string
  /** The ledger (schema `chatferry`). */
  readonly ledger: Kysely<any>
  readonly jobId: string
  /** Loader processes that died without settling (SIGKILL, a lost lease): each may lose its in-flight answers. */
  readonly kills: number
  /** `load.concurrency` of the processes killed. */
  readonly concurrency: number
  readonly itemsPerRequest?: number
  /**
   * The loader's request timeout (`target.timeoutMs`): a 200 the sandbox took this long to give
   * was never seen by the loader (it gave up), so a re-send after it is explained.
   */
  readonly timeoutMs?: number
}

interface Send {
  readonly requestId: number
  readonly receivedAtMs: number
  /** The HTTP status answered; 200 is the only one that carries per-item results. */
  readonly status: number | null
  readonly durationMs: number
  /** The request's error code (`ERR_EXCEPTION` for the platform's bad-row 500). */
  readonly requestCode: string | null
  readonly result: RequestLogItemResult
  readonly code: string | undefined
}

/**
 * A message request the platform answered with its bad-row 500 (`ERR_EXCEPTION` after writing the
 * good rows): the loader reads such a request's rows back (src/load/read-back.ts) and settles the
 * ones it finds as created, so a row this request created may be `created` in the ledger.
 */
function badRow500(entity: Entity, s: Send): boolean {
  return entity === 'messages' && s.status === 500 && s.requestCode === 'ERR_EXCEPTION'
}

/** An answer the client received for this item: a 200 with a per-item result, in time. */
function answered(s: Send, timeoutMs: number): boolean {
  return s.status === 200 && s.durationMs < timeoutMs && (s.result === 'created' || s.result === 'exists' || s.result === 'refused')
}

const MAX_KEYS = 20

function violation(kind: ViolationKind, entity: Entity, keys: readonly string[], detail: string): Violation {
  return { kind, entity, keys, detail }
}

const CHAT_ENDPOINTS: ReadonlySet<string> = new Set(CHAT_WRITE_ENDPOINTS)

export async function auditDeliveries(o: AuditOptions): Promise<AuditReport> {
  await o.sb.whenIdle()
  const log = await o.sb.requests(o.appId)
  // `requests` answers at most 10,000 rows; a test that sends more must read the log in pages.
  if (log.length >= 10_000) {
    throw new Error('the request log holds 10,000 requests or more: the audit would miss some')
  }
  const sends = new Map<Entity, Map<string, Send[]>>(ENTITIES.map((e) => [e, new Map()]))
  let nSends = 0
  for (const r of [...log].sort((a, b) => a.receivedAtMs - b.receivedAtMs || a.id - b.id)) {
    const items: RequestLogItem[] | null | undefined = r.items
    if (items == null) {
      continue
    }
    if (CHAT_ENDPOINTS.has(r.endpoint)) {
      // The chat writes of a delta run: not imports (see chatWrites in chat-world.ts).
      continue
    }
    const byKey = sends.get(r.endpoint as Entity)
    if (byKey === undefined) {
      throw new Error(`unknown endpoint in the request log: ${r.endpoint}`)
    }
    for (const it of items) {
      nSends++
      const list = byKey.get(it.key) ?? []
      list.push({
        requestId: r.id,
        receivedAtMs: r.receivedAtMs,
        status: r.status,
        durationMs: r.durationMs,
        requestCode: r.code ?? null,
        result: it.result,
        code: it.code,
      })
      byKey.set(it.key, list)
    }
  }

  const ledgerRows = await sql<{ entity: Entity; target_key: string; status: string; done_reason: string | null }>`
    select entity, target_key, status, done_reason from chatferry.items where job_id = ${o.jobId}`.execute(o.ledger)
  const ledger = new Map<Entity, Map<string, { status: string; doneReason: string | null }>>(ENTITIES.map((e) => [e, new Map()]))
  for (const row of ledgerRows.rows) {
    ledger.get(row.entity)?.set(row.target_key, { status: row.status, doneReason: row.done_reason })
  }

  const bound = o.kills * inFlightCapacity(o.concurrency, o.itemsPerRequest)
  const violations: Violation[] = []
  let resends = 0
  let unexplained = 0
  let existsAnswers = 0
  const unexplainedKeys: { entity: Entity; key: string; detail: string }[] = []

  for (const entity of ENTITIES) {
    const byKey = sends.get(entity) as Map<string, Send[]>
    const items = ledger.get(entity) as Map<string, { status: string; doneReason: string | null }>
    const stored = await sandboxKeys(o.sb, o.appId, entity)
    const group: Partial<Record<ViolationKind, { keys: string[]; detail: string }>> = {}
    const add = (kind: ViolationKind, key: string, detail: string) => {
      const g = (group[kind] ??= { keys: [], detail })
      g.keys.push(key)
    }

    for (const [key, list] of byKey) {
      existsAnswers += list.filter((s) => s.result === 'exists').length
      const created = list.filter((s) => s.result === 'created')
      if (created.length > 1) {
        add('created-twice', key, 'created by more than one request (the platform accepted it twice)')
      }
      if (list[0]?.result === 'exists') {
        add('exists-on-first-send', key, 'answered "already exists" by the first request that carried it (created by something else)')
      }
      for (let i = 1; i < list.length; i++) {
        resends++
        const prev = list.slice(0, i).find((s) => answered(s, o.timeoutMs ?? Infinity))
        if (prev !== undefined) {
          unexplained++
          unexplainedKeys.push({
            entity,
            key,
            detail: `request ${prev.requestId} answered it (${prev.result}${prev.code ? ` ${prev.code}` : ''}), request ${list[i]?.requestId} sent it again`,
          })
        }
      }
      const item = items.get(key)
      if (item === undefined && created.length > 0) {
        add('created-unplanned', key, 'created on the platform but not in the ledger')
      }
      if (item?.status === 'rejected' && created.length > 0) {
        add('rejected-but-created', key, 'rejected by the ledger but created on the platform')
      }
      if (item?.status === 'done' && item.doneReason === 'created' && !created.some((s) => s.status === 200 || badRow500(entity, s))) {
        add('created-without-answer', key, 'the ledger says created, but no 200 answer said so, nor a bad-row 500 the loader reads back')
      }
    }
    for (const [key, item] of items) {
      if (item.status === 'planned' || item.status === 'sent') {
        add('not-finished', key, `still ${item.status} in the ledger`)
      }
      if (item.status !== 'done') {
        continue
      }
      const created = (byKey.get(key) ?? []).filter((s) => s.result === 'created').length
      if (created === 0) {
        add('done-never-created', key, 'done in the ledger, but no request created it')
      }
      if (!stored.has(key)) {
        add('done-not-in-sandbox', key, 'done in the ledger, but not in the sandbox')
      }
    }
    for (const [kind, g] of Object.entries(group) as [ViolationKind, { keys: string[]; detail: string }][]) {
      violations.push(violation(kind, entity, g.keys, `${g.keys.length} ${entity}: ${g.detail}`))
    }
  }

  if (unexplained > bound) {
    for (const entity of ENTITIES) {
      const mine = unexplainedKeys.filter((u) => u.entity === entity)
      if (mine.length === 0) {
        continue
      }
      violations.push(
        violation(
          'resent-beyond-bound',
          entity,
          mine.map((u) => u.key),
          `${unexplained} items re-sent after an answer in all (bound: ${o.kills} kill(s) × ${inFlightCapacity(o.concurrency, o.itemsPerRequest)} in flight = ${bound}); ` +
            `${mine.length} ${entity}, e.g. ${mine
              .slice(0, 3)
              .map((u) => `${u.key}: ${u.detail}`)
              .join('; ')}`,
        ),
      )
    }
  }

  return {
    violations,
    stats: { requests: log.length, sends: nSends, resends, unexplainedResends: unexplained, existsAnswers, bound },
  }
}

/** The violations as lines for a failure message, at most `MAX_KEYS` keys each. */
export function describeViolations(report: AuditReport): string {
  if (report.violations.length === 0) {
    return 'no violations'
  }
  const s = report.stats
  return [
    `delivery audit: ${s.requests} requests, ${s.sends} sends, ${s.resends} re-sends (${s.unexplainedResends} after an answer; bound ${s.bound}), ${s.existsAnswers} "already exists"`,
    ...report.violations.map(
      (v) =>
        `- ${v.kind}: ${v.detail} [${v.keys.slice(0, MAX_KEYS).join(', ')}${v.keys.length > MAX_KEYS ? `, … ${v.keys.length - MAX_KEYS} more` : ''}]`,
    ),
  ].join('\n')
}
