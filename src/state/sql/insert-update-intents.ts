import { type Kysely, sql } from 'kysely'

import { storableKey, storableText } from '../safe-text.ts'
import type { StateDatabase, UpdateKind, UpdatePolicy, UpdateStatus } from '../schema.ts'

/** One update intent of an item already on the platform, as `chatferry.updates` records it. */
export interface UpdateIntent {
  readonly kind: UpdateKind
  readonly legacyId: string
  /** The item's target key (uid, guid, `<guid>_member_<uid>`, muid). */
  readonly targetKey: string
  /** The call's body: the desired state (`{}` for calls without one). */
  readonly body: Readonly<Record<string, unknown>>
  readonly policy: UpdatePolicy
  /** Why: the fields that changed, `vanished from the source`, or why the platform cannot take it. */
  readonly reason: string
  /** The item payload hash this update brings the platform to; null for removals and unchangeable changes. */
  readonly payloadHash?: string | null
  /**
   * Held back by the conflict policy (`changes.conflicts`): the item changed on the platform after
   * chatferry last wrote it, so this `apply` intent is recorded `conflict` (report) or `dropped`
   * (platform-wins) instead of `planned`.
   */
  readonly heldBack?: 'conflict' | 'dropped'
}

/** What recording a set of intents did. */
export interface RecordedUpdates {
  /** Intents with policy `apply`, now `planned` for the update lane. */
  planned: number
  /** Planned intents of the same item and kind that the new ones replaced before they were sent. */
  superseded: number
  /** Intents with policy `report`, recorded `reported` (never sent). */
  reported: number
  /** Intents with policy `ignore`, recorded `ignored` (never sent). */
  ignored: number
  /** Reported or ignored intents already recorded for the same item, kind and payload hash: not recorded twice. */
  repeated: number
  /** `apply` intents held back because their item changed on the platform (`changes.conflicts: report`), recorded `conflict`. */
  conflicts: number
  /** The same under `changes.conflicts: platform-wins`, recorded `dropped`. */
  dropped: number
}

export const noUpdates = (): RecordedUpdates => ({ planned: 0, superseded: 0, reported: 0, ignored: 0, repeated: 0, conflicts: 0, dropped: 0 })

/** Adds `b`'s counts into `a`. */
export const addRecorded = (a: RecordedUpdates, b: RecordedUpdates): void => {
  for (const k of Object.keys(a) as (keyof RecordedUpdates)[]) {
    a[k] += b[k]
  }
}

const STATUS_OF: Record<UpdatePolicy, UpdateStatus> = { apply: 'planned', report: 'reported', ignore: 'ignored' }
const statusOf = (i: UpdateIntent): UpdateStatus => i.heldBack ?? STATUS_OF[i.policy]

/**
 * Records update intents of one entity in `chatferry.updates`. An `apply` intent first marks the
 * `planned` row of the same item and kind `superseded` (the unique partial index
 * `updates_planned_uq` admits one planned row per item and kind; a `sent` one is left alone, and
 * the new one is planned after it). A `report`/`ignore` intent is written `reported`/`ignored`,
 * unless the same item, kind, policy and payload hash is recorded already (a change seen again by a
 * later read is counted once); so is an intent held back by the conflict policy (`conflict` /
 * `dropped`, see {@link UpdateIntent.heldBack}). Runs inside the caller's transaction.
 */
export async function insertUpdateIntents(
  db: Kysely<StateDatabase>,
  jobId: string,
  entity: string,
  intents: readonly UpdateIntent[],
): Promise<RecordedUpdates> {
  const out = noUpdates()
  if (intents.length === 0) {
    return out
  }
  // One row per item, kind and policy: the last intent of a key and kind in one call wins.
  const last = new Map<string, UpdateIntent>()
  for (const intent of intents) {
    last.set(`${intent.policy}\u0001${intent.targetKey}\u0001${intent.kind}`, intent)
  }
  const rows = [...last.values()]
  const applied = rows.filter((r) => statusOf(r) === 'planned')
  if (applied.length > 0) {
    const superseded = await sql<{ n: number }>`
      with s as (
        update chatferry.updates as u set status = 'superseded', settled_at = now()
        from unnest(${applied.map((r) => storableKey(r.targetKey))}::text[], ${applied.map((r) => r.kind)}::text[]) as t(k, kind)
        where u.job_id = ${jobId} and u.entity = ${entity} and u.status = 'planned' and u.target_key = t.k and u.kind = t.kind
        returning 1)
      select count(*)::int as n from s`.execute(db)
    out.superseded = superseded.rows[0]?.n ?? 0
  }
  const inserted = await sql<{ status: UpdateStatus; n: number }>`
    with ins as (
      insert into chatferry.updates (job_id, entity, kind, legacy_id, target_key, body, payload_hash, policy, status, reason)
      select ${jobId}, ${entity}, t.kind, t.l, t.k, t.b, t.h, t.p, t.s, t.r
      from unnest(${rows.map((r) => r.kind)}::text[], ${rows.map((r) => storableText(r.legacyId))}::text[],
        ${rows.map((r) => storableKey(r.targetKey))}::text[], ${rows.map((r) => storableText(JSON.stringify(r.body)))}::text[],
        ${rows.map((r) => r.payloadHash ?? null)}::text[], ${rows.map((r) => r.policy)}::text[],
        ${rows.map(statusOf)}::text[], ${rows.map((r) => storableText(r.reason))}::text[]) as t(kind, l, k, b, h, p, s, r)
      where t.s = 'planned' or not exists (
        select 1 from chatferry.updates u
        where u.job_id = ${jobId} and u.entity = ${entity} and u.target_key = t.k and u.kind = t.kind
          and u.status = t.s and u.payload_hash is not distinct from t.h and u.reason is not distinct from t.r)
      returning status)
    select status, count(*)::int as n from ins group by status`.execute(db)
  for (const r of inserted.rows) {
    if (r.status === 'planned') {
      out.planned = r.n
    } else if (r.status === 'reported') {
      out.reported = r.n
    } else if (r.status === 'ignored') {
      out.ignored = r.n
    } else if (r.status === 'conflict') {
      out.conflicts = r.n
    } else if (r.status === 'dropped') {
      out.dropped = r.n
    }
  }
  out.repeated = rows.length - out.planned - out.reported - out.ignored - out.conflicts - out.dropped
  return out
}
