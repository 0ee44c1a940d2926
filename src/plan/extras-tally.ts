/**
 * The extra items records bring with them (placeholder users for unknown senders or receivers,
 * the system user): each planned once per run, counted by reason, and each placeholder with the
 * messages that own it (the first {@link PLACEHOLDERS_TRACKED} one by one, the rest summed).
 */
import type { MappedItem } from '../../mappings/index.ts'
import type { PlannedItem } from '../state/index.ts'
import type { EntityPlanSummary } from './plan-summary.ts'

/** Placeholders whose owned messages are counted one by one; the rest are summed under `others`. */
export const PLACEHOLDERS_TRACKED = 1000

export interface PlaceholderInfo {
  /** The unknown legacy user id. */
  legacyId: string
  /** Messages that reference it (as sender or receiver). */
  messages: number
}

export class ExtrasTally {
  /** Placeholder users by uid (at most {@link PLACEHOLDERS_TRACKED}), and the messages they own. */
  readonly placeholders: Record<string, PlaceholderInfo> = {}
  /** Messages owned by placeholders beyond the tracked ones. */
  readonly placeholderOthers = { placeholders: 0, messages: 0 }
  readonly #planned = new Set<string>()
  #tracked = 0
  /** The metadata key under which a placeholder's payload names its legacy id. */
  readonly #metadataKey: string
  /** The users' summary, where extras are counted by reason. */
  readonly #users: EntityPlanSummary

  constructor(metadataKey: string, users: EntityPlanSummary) {
    this.#metadataKey = metadataKey
    this.#users = users
  }

  /** Counts an extra item a record needs; returns it to plan when this run has not planned it yet. */
  add(extra: MappedItem<'users'>): PlannedItem | undefined {
    const reason = extra.reason ?? 'extra'
    if (reason === 'placeholder') {
      this.#notePlaceholder(extra)
    }
    if (this.#planned.has(extra.targetKey)) {
      return undefined
    }
    this.#planned.add(extra.targetKey)
    this.#users.extras[reason] = (this.#users.extras[reason] ?? 0) + 1
    return { legacyId: `~${reason}:${extra.targetKey}`, targetKey: extra.targetKey, payload: extra.payload }
  }

  #notePlaceholder(extra: MappedItem<'users'>): void {
    const known = this.placeholders[extra.targetKey]
    if (known) {
      known.messages++
    } else if (this.#tracked < PLACEHOLDERS_TRACKED) {
      const id = (extra.payload.metadata as Record<string, { id?: unknown }> | undefined)?.[this.#metadataKey]?.id
      this.placeholders[extra.targetKey] = { legacyId: typeof id === 'string' ? id : extra.targetKey, messages: 1 }
      this.#tracked++
    } else {
      this.placeholderOthers.messages++
      if (!this.#planned.has(extra.targetKey)) {
        this.placeholderOthers.placeholders++
      }
    }
  }
}
