/**
 * `status`'s view of the update intents (`chatferry.updates`): per entity, how many stand in each
 * status (planned, sent, done, rejected, reported, ignored, superseded), and per kind and status.
 */
import { LEGACY_ENTITIES } from '../model/index.ts'
import { UPDATE_STATUSES, type UpdateCountRow, type UpdateStatus } from '../state/index.ts'
import type { LedgerReader } from './ledger-read-socket.ts'

export type UpdateStatusCounts = Record<UpdateStatus, number>

export interface StatusUpdates {
  /** Per entity, intents per status. */
  readonly entities: Record<string, UpdateStatusCounts>
  /** Per entity, kind, policy and status. */
  readonly byKind: readonly UpdateCountRow[]
}

const zero = (): UpdateStatusCounts => Object.fromEntries(UPDATE_STATUSES.map((s) => [s, 0])) as UpdateStatusCounts

export async function statusUpdates(store: Pick<LedgerReader, 'updateCounts'>, jobId: string): Promise<StatusUpdates> {
  const byKind = await store.updateCounts(jobId)
  const entities: Record<string, UpdateStatusCounts> = Object.fromEntries(LEGACY_ENTITIES.map((e) => [e, zero()]))
  for (const r of byKind) {
    const e = (entities[r.entity] ??= zero())
    e[r.status] += r.n
  }
  return { entities, byKind }
}

/** One line per entity with any intent: `updates of users: 2 planned, 1 done, 3 reported`; none when there are none. */
export function formatStatusUpdates(u: StatusUpdates): string[] {
  return Object.entries(u.entities).flatMap(([entity, counts]) => {
    const parts = UPDATE_STATUSES.filter((s) => counts[s] > 0).map((s) => `${counts[s]} ${s}`)
    return parts.length > 0 ? [`updates of ${entity}: ${parts.join(', ')}`] : []
  })
}
