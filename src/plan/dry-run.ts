/**
 * The dry run behind `chatferry plan`: the planning loop of `plan-job.ts` with a sink that writes
 * no item state, no id decision and no cursor. Each mapped item is classified against the ledger
 * instead:
 *
 * - **new**: the ledger has never seen it;
 * - **pending**: planned or in flight, same payload; **pendingChanged**: planned, payload changed;
 * - **replanned**: rejected or skipped before, mappable now;
 * - **loadedUnchanged**: on the platform with the same payload; **loadedChanged**: on the platform,
 *   but the source changed since (never resent automatically) — with the fields that changed.
 *
 * Every entity is read in full from the source (no cursor is honoured), so the report describes
 * the whole migration as it would run now. Thread parents of earlier pages are kept in a temporary
 * table of the dry run's own connection (memory stays flat for millions of messages) and vanish
 * with it.
 */
import { sql, type Kysely } from 'kysely'
import type { AdjustFn, PlannedMessage, Policies, SkippedRef } from '../../mappings/index.ts'
import type { LegacyEntity } from '../model/index.ts'
import type { SourceSession } from '../model/connector.ts'
import { payloadHash, type LedgerStore, type PlanCounts, type PlannedItem, type StateDatabase } from '../state/index.ts'
import { emptyCounts } from '../state/index.ts'
import { loadIdMap, planJob, SAMPLES_PER_REASON, type PlanJobSummary, type PlanSink, type ReasonCount } from './plan-job.ts'
import { policyOfSkipReason } from './lookups.ts'

export const FATES = ['new', 'pending', 'pendingChanged', 'replanned', 'loadedUnchanged', 'loadedChanged'] as const
/** What the dry run predicts for one mapped item (see the file comment). */
export type Fate = (typeof FATES)[number]
export type FateCounts = Record<Fate, number>

export interface DryRunEntity {
  fates: FateCounts
  /** Of loaded-but-changed (and pending-changed) items: field path → count + samples (legacy ids). */
  changedFields: Record<string, ReasonCount>
  /** Samples per fate: `legacyId → targetKey`. */
  samples: Partial<Record<Fate, { legacyId: string; targetKey: string }[]>>
}

export interface DryRunResult {
  readonly summary: PlanJobSummary
  readonly entities: Record<LegacyEntity, DryRunEntity>
  /** Item keys that will be sent (new, pending, pendingChanged, replanned) per entity, when collected. */
  readonly toSend?: Record<LegacyEntity, Set<string>>
}

export interface DryRunOptions {
  readonly jobId: string
  readonly store: LedgerStore
  readonly session: SourceSession
  readonly policies: Policies
  readonly adjust?: AdjustFn
  readonly now: number
  readonly pageSize?: number
  readonly changedSince?: number
  /**
   * Keep the target keys of the items to send (for the pre-flight against the target, which
   * checks them against the platform's lists). Users, groups and members only: messages are many.
   */
  readonly collectKeys?: boolean
  readonly signal?: AbortSignal
}

function emptyFates(): FateCounts {
  return { new: 0, pending: 0, pendingChanged: 0, replanned: 0, loadedUnchanged: 0, loadedChanged: 0 }
}

/** Top-level and second-level field paths whose JSON differs between two payloads. */
export function changedFields(before: unknown, after: unknown): string[] {
  const out: string[] = []
  const a = (before ?? {}) as Record<string, unknown>
  const b = (after ?? {}) as Record<string, unknown>
  for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
    const x = a[key]
    const y = b[key]
    if (JSON.stringify(x) === JSON.stringify(y)) continue
    const nested = (v: unknown) => v !== null && typeof v === 'object' && !Array.isArray(v)
    if (nested(x) && nested(y)) {
      const xo = x as Record<string, unknown>
      const yo = y as Record<string, unknown>
      for (const k of new Set([...Object.keys(xo), ...Object.keys(yo)])) {
        if (JSON.stringify(xo[k]) !== JSON.stringify(yo[k])) out.push(`${key}.${k}`)
      }
    } else {
      out.push(key)
    }
  }
  return out.sort()
}

interface LedgerRow {
  target_key: string
  status: string
  payload_hash: string | null
  loaded_hash: string | null
  payload: string | null
}

/** Runs the dry run; the ledger's items, cursors and id map are only read. */
export async function dryRunPlan(options: DryRunOptions): Promise<DryRunResult> {
  const { jobId, store } = options
  // One connection for the whole run: the temporary table of thread parents lives on it.
  return store.db.connection().execute(async (db) => {
    await sql`create temporary table if not exists chatferry_plan_parents (
      legacy_id text primary key, muid text, text text, sender_name text, skipped_policy text) on commit preserve rows`.execute(db)
    await sql`truncate chatferry_plan_parents`.execute(db)
    try {
      return await run(db)
    } finally {
      await sql`drop table if exists chatferry_plan_parents`.execute(db).catch(() => {})
    }
  })

  async function run(db: Kysely<StateDatabase>): Promise<DryRunResult> {
    const entities = {} as Record<LegacyEntity, DryRunEntity>
    const toSend = options.collectKeys ? ({ users: new Set(), groups: new Set(), members: new Set(), messages: new Set() } as Record<LegacyEntity, Set<string>>) : undefined
    for (const e of ['users', 'groups', 'members', 'messages'] as const) entities[e] = { fates: emptyFates(), changedFields: {}, samples: {} }

    async function classify(entity: LegacyEntity, items: readonly PlannedItem[]): Promise<PlanCounts> {
      const counts = emptyCounts()
      if (items.length === 0) return counts
      const byKey = new Map<string, PlannedItem>()
      for (const item of items) byKey.set(item.targetKey, item)
      counts.duplicates += items.length - byKey.size
      const keys = [...byKey.keys()]
      const hashes = new Map<string, string>()
      for (const [key, item] of byKey) hashes.set(key, payloadHash(typeof item.payload === 'string' ? item.payload : JSON.stringify(item.payload)))
      // The stored payload travels only for items that changed (to name the fields that did).
      const old = await sql<LedgerRow>`
        select i.target_key, i.status, i.payload_hash, i.loaded_hash,
          case when i.status in ('done', 'planned', 'sent')
            and (case when i.status = 'done' then coalesce(i.loaded_hash, i.payload_hash) else i.payload_hash end) is distinct from t.h
          then i.payload end as payload
        from unnest(${keys}::text[], ${[...hashes.values()]}::text[]) as t(k, h)
        join chatferry.items i on i.job_id = ${jobId} and i.entity = ${entity} and i.target_key = t.k`.execute(db)
      const known = new Map(old.rows.map((r) => [r.target_key, r]))
      const mine = entities[entity]
      for (const [key, item] of byKey) {
        const hash = hashes.get(key) as string
        const was = known.get(key)
        let fate: Fate
        if (was === undefined) {
          fate = 'new'
          counts.inserted++
        } else if (was.status === 'rejected' || was.status === 'skipped') {
          fate = 'replanned'
          counts.replanned++
        } else if (was.status === 'done') {
          // Against what the platform accepted: a change an earlier run recorded is still a change.
          if ((was.loaded_hash ?? was.payload_hash) === hash) {
            fate = 'loadedUnchanged'
            counts.unchanged++
          } else {
            fate = 'loadedChanged'
            counts.loadedButChanged++
          }
        } else if (was.payload_hash === hash) {
          fate = 'pending'
          counts.unchanged++
        } else {
          fate = 'pendingChanged'
          counts.updated++
        }
        mine.fates[fate]++
        const list = (mine.samples[fate] ??= [])
        if (list.length < SAMPLES_PER_REASON) list.push({ legacyId: item.legacyId, targetKey: key })
        if ((fate === 'loadedChanged' || fate === 'pendingChanged') && was?.payload) {
          const before = JSON.parse(was.payload) as unknown
          const after = typeof item.payload === 'string' ? (JSON.parse(item.payload) as unknown) : item.payload
          for (const field of changedFields(before, after)) {
            const entry = (mine.changedFields[field] ??= { count: 0, samples: [] })
            entry.count++
            if (entry.samples.length < SAMPLES_PER_REASON) entry.samples.push(item.legacyId)
          }
        }
        if (toSend && entity !== 'messages' && (fate === 'new' || fate === 'pending' || fate === 'pendingChanged' || fate === 'replanned')) {
          toSend[entity].add(key)
        }
      }
      return counts
    }

    const sink: PlanSink = {
      resumable: false,
      loadIds: () => loadIdMap(db, jobId),
      // Decisions stay in memory: the dry run must not claim ids for a later real run.
      saveIds: async (ids) => void ids.takeNew(),
      loadUsers: async () => new Map(),
      loadGroups: async () => new Map(),
      async parents(legacyIds) {
        const found = new Map<string, PlannedMessage | SkippedRef>()
        const rows = await sql<{ legacy_id: string; muid: string | null; text: string | null; sender_name: string | null; skipped_policy: string | null }>`
          select legacy_id, muid, text, sender_name, skipped_policy from chatferry_plan_parents
          where legacy_id = any(${[...legacyIds]}::text[])`.execute(db)
        for (const r of rows.rows) {
          if (r.skipped_policy !== null) found.set(r.legacy_id, { skipped: true, policy: policyOfSkipReason(`policy:${r.skipped_policy}:`) })
          else {
            found.set(r.legacy_id, {
              muid: r.muid ?? '',
              ...(r.text !== null ? { text: r.text } : {}),
              ...(r.sender_name !== null ? { senderName: r.sender_name } : {}),
            })
          }
        }
        return found
      },
      getCursor: async () => undefined,
      writeExtras: (items) => classify('users', items),
      async writePage(entity, page) {
        if (entity === 'messages' && page.messages.size > 0) {
          const ids: string[] = []
          const muids: (string | null)[] = []
          const texts: (string | null)[] = []
          const senders: (string | null)[] = []
          const skipped: (string | null)[] = []
          for (const [id, m] of page.messages) {
            ids.push(id)
            if ('skipped' in m) {
              muids.push(null)
              texts.push(null)
              senders.push(null)
              skipped.push(m.policy)
            } else {
              muids.push(m.muid)
              texts.push(m.text ?? null)
              senders.push(m.senderName ?? null)
              skipped.push(null)
            }
          }
          await sql`insert into chatferry_plan_parents (legacy_id, muid, text, sender_name, skipped_policy)
            select * from unnest(${ids}::text[], ${muids}::text[], ${texts}::text[], ${senders}::text[], ${skipped}::text[])
            on conflict (legacy_id) do nothing`.execute(db)
        }
        const counts = await classify(entity, page.items)
        counts.skipped = page.skips.length
        counts.rejected = page.rejects.length
        return counts
      },
      finishEntity: async () => {},
    }
    const summary = await planJob({
      jobId,
      store,
      session: options.session,
      policies: options.policies,
      now: options.now,
      sink,
      // The dry run reads every entity in full, so the source's own count must match what it read.
      countSource: true,
      ...(options.pageSize !== undefined ? { pageSize: options.pageSize } : {}),
      ...(options.changedSince !== undefined ? { changedSince: options.changedSince } : {}),
      ...(options.adjust ? { adjust: options.adjust } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    })
    return { summary, entities, ...(toSend ? { toSend } : {}) }
  }
}
