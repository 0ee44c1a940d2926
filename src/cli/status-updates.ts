/**
 * `status`'s view of the update intents (`chatferry.updates`): per entity, how many stand in each
 * status (planned, sent, done, rejected, reported, ignored, superseded), and per kind and status.
 */
import { LEGACY_ENTITIES } from '../model/index.ts'
import { UPDATE_STATUSES, type UpdateConflict, type UpdateCountRow, type UpdateStatus } from '../state/index.ts'
import type { StatusReadings } from './status-readings.ts'

export type UpdateStatusCounts = Record<UpdateStatus, number>

export interface StatusUpdates {
  /** Per entity, intents per status. */
  readonly entities: Record<string, UpdateStatusCounts>
  /** Per entity, kind, policy and status. */
  readonly byKind: readonly UpdateCountRow[]
  /** The first updates (status-readings.ts reads up to `CONFLICTS_LISTED`) not applied because their item changed on the platform (`conflict`), with legacy id and target key. */
  readonly conflicts: readonly UpdateConflict[]
}

const zero = (): UpdateStatusCounts => Object.fromEntries(UPDATE_STATUSES.map((s) => [s, 0])) as UpdateStatusCounts

export function statusUpdates(readings: Pick<StatusReadings, 'updateCounts' | 'updateConflicts'>): StatusUpdates {
  const byKind = readings.updateCounts
  const conflicts = readings.updateConflicts
  const entities: Record<string, UpdateStatusCounts> = Object.fromEntries(LEGACY_ENTITIES.map((e) => [e, zero()]))
  for (const r of byKind) {
    const e = (entities[r.entity] ??= zero())
    e[r.status] += r.n
  }
  return { entities, byKind, conflicts }
}

/** One line per entity with any intent: `updates of users: 2 planned, 1 done, 3 reported`; none when there are none. */
export function formatStatusUpdates(u: StatusUpdates): string[] {
  return Object.entries(u.entities).flatMap(([entity, counts]) => {
    const parts = UPDATE_STATUSES.filter((s) => counts[s] > 0).map((s) => `${counts[s]} ${s}`)
    return parts.length > 0 ? [`updates of ${entity}: ${parts.join(', ')}`] : []
  })
}

/** The held-back updates, one line each: kind, legacy id, target key and why (none when there are none). */
export function formatStatusConflicts(u: StatusUpdates): string[] {
  if (u.conflicts.length === 0) {
    return []
  }
  const total = Object.values(u.entities).reduce((n, c) => n + c.conflict, 0)
  return [
    `CONFLICTS: ${total} update(s) not applied — the item changed on the platform after chatferry wrote it (changes.conflicts: report; set source-wins to apply them):`,
    ...u.conflicts.map((c) => `  ${c.kind} legacy id ${c.legacyId} → ${c.targetKey}: ${c.reason ?? ''}`),
    ...(total > u.conflicts.length ? [`  … and ${total - u.conflicts.length} more (status --json lists the first ${u.conflicts.length})`] : []),
  ]
}
