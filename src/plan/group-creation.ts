/**
 * What the planner knows of a group's times besides its row, for a group the source gives no
 * creation time (`mappings/group-created-at.ts` chooses one from it): the `createdAt` the ledger
 * already holds for the group, and — asked of the source once, when the first group without a
 * valid creation time is read, before members and messages are — the earliest member join and
 * group message per group (`SourceSession.groupActivity`, one grouped query per entity).
 */
import type { GroupCreationHints, PlannedGroup, SkippedRef } from '../../mappings/index.ts'
import type { GroupActivity, SourceRow, SourceSession } from '../model/connector.ts'
import type { LegacyGroup } from '../model/index.ts'

const NONE: ReadonlyMap<string, GroupActivity> = new Map()

export class GroupCreation {
  readonly #planned: ReadonlyMap<string, number>
  #activity: ReadonlyMap<string, GroupActivity> | undefined
  #sourceEarliest: number | undefined

  /** `planned`: the groups the ledger holds, by legacy id. */
  constructor(planned: ReadonlyMap<string, PlannedGroup | SkippedRef>) {
    const times = new Map<string, number>()
    for (const [id, g] of planned) {
      if (!('skipped' in g) && g.createdAt !== undefined) {
        times.set(id, g.createdAt)
      }
    }
    this.#planned = times
  }

  /** True once the source was asked (or had nothing to tell). */
  get loaded(): boolean {
    return this.#activity !== undefined
  }

  /** Groups the source's answer covers (0 before it was asked). */
  get groupsWithActivity(): number {
    return this.#activity?.size ?? 0
  }

  /** Asks the source for the groups' earliest times when a row of this page needs them and it was not asked yet. */
  async prepare(session: SourceSession, rows: readonly SourceRow<LegacyGroup>[], signal?: AbortSignal): Promise<boolean> {
    if (this.#activity !== undefined || !rows.some((r) => r.ok && !validTime(r.record.createdAt) && !this.#planned.has(r.record.id))) {
      return false
    }
    this.#activity = session.groupActivity ? await session.groupActivity(signal ? { signal } : {}) : NONE
    let earliest: number | undefined
    for (const a of this.#activity.values()) {
      for (const t of [a.firstJoinedAt, a.firstSentAt]) {
        if (t !== undefined && (earliest === undefined || t < earliest)) {
          earliest = t
        }
      }
    }
    this.#sourceEarliest = earliest
    return true
  }

  /** The hints for one group (by legacy id). */
  readonly hints = (legacyGroupId: string): GroupCreationHints => {
    const planned = this.#planned.get(legacyGroupId)
    const a = this.#activity?.get(legacyGroupId)
    return {
      ...(planned !== undefined ? { planned } : {}),
      ...(a?.firstJoinedAt !== undefined ? { firstJoinedAt: a.firstJoinedAt } : {}),
      ...(a?.firstSentAt !== undefined ? { firstSentAt: a.firstSentAt } : {}),
      ...(this.#sourceEarliest !== undefined ? { sourceEarliest: this.#sourceEarliest } : {}),
    }
  }
}

/** A creation time the group mapping keeps as is (what `optionalSeconds` accepts). */
function validTime(t: unknown): boolean {
  return typeof t === 'number' && Number.isFinite(t) && t >= 0 && t / 1000 <= 9_999_999_999
}
