/**
 * Verify's fix where the ledger's status and the platform disagree on an item chatferry owns: an
 * item done in the ledger and absent on the platform; an item rejected in the ledger and present
 * there; an item removed by a done update (a group deleted, a member kicked, a message deleted)
 * and still on the platform. Each is fixed the same way: plan it (or its removal) again and load. Without `--replan` the note names that command; with it, verify collects the items,
 * plans them again in the ledger once its steps are over ({@link applyReplan}), and notes them as
 * explained — planned again, waiting for `chatferry load`, like any item not loaded yet.
 */
import type { LegacyEntity } from '../model/index.ts'
import type { LedgerStore } from '../state/index.ts'
import { rejectedWithoutPayloadNote, skippedButPresentNote } from './foreign-items.ts'
import type { ReplanList, VerifyRun } from './verify-run.ts'

export function createReplanList(enabled: boolean): ReplanList {
  return { enabled, items: new Map(), removals: new Map() }
}

/** What verify says of a fix by replanning, and whether the mismatch is explained now. */
export interface ReplanNote {
  readonly explained: boolean
  readonly note: string
}

/** A done item the platform lacks: advised (`… --replan` then `… load`), or collected with `--replan`. */
export function missingItem(run: VerifyRun, entity: string, targetKey: string): ReplanNote {
  return collect(run, run.replan.items, entity, targetKey, 'done in the ledger, absent on the platform', 'it is imported again')
}

/** A rejected item (with a payload) the platform holds: sent again, the platform answers "already exists", and it is done. */
export function rejectedButPresent(run: VerifyRun, entity: string, targetKey: string): ReplanNote {
  return collect(
    run,
    run.replan.items,
    entity,
    targetKey,
    'on the platform, but rejected in the ledger',
    'the platform answers that it exists and the ledger marks it done',
  )
}

/** An item a done removal should have taken off the platform, still there. */
export function removalNotApplied(run: VerifyRun, entity: string, targetKey: string, what: string): ReplanNote {
  return collect(run, run.replan.removals, entity, targetKey, `${what}, still on the platform`, 'the removal is sent again')
}

function collect(run: VerifyRun, into: Map<string, Set<string>>, entity: string, key: string, what: string, fix: string): ReplanNote {
  if (!run.replan.enabled) {
    return { explained: false, note: `${what}: \`${run.advice.replan}\` plans it again, then \`${run.advice.load}\` (${fix})` }
  }
  const keys = into.get(entity) ?? new Set<string>()
  keys.add(key)
  into.set(entity, keys)
  return { explained: true, note: `${what}: planned again by this verify (--replan): run \`${run.advice.load}\` (${fix})` }
}

/** A listed item the ledger holds but not as done: not loaded yet, rejected, or skipped. */
export function presentNote(run: VerifyRun, entity: LegacyEntity, key: string, item: { status: string; payload: string | null }): ReplanNote {
  if (item.status === 'planned' || item.status === 'sent') {
    return { explained: true, note: `the ledger has it ${item.status}: the load has not finished` }
  }
  if (item.status === 'rejected') {
    return item.payload === null ? { explained: false, note: rejectedWithoutPayloadNote(entity) } : rejectedButPresent(run, entity, key)
  }
  return { explained: false, note: skippedButPresentNote(entity) }
}

/** How many items and removals a verify planned again. */
export interface ReplanCounts {
  readonly items: number
  readonly removals: number
}

/** Plans the collected items and removals again in the ledger; returns how many. */
export async function applyReplan(store: LedgerStore, jobId: string, list: ReplanList): Promise<ReplanCounts> {
  let items = 0
  let removals = 0
  for (const [entity, keys] of list.items) {
    items += await store.replanItems(jobId, entity, [...keys])
  }
  for (const [entity, keys] of list.removals) {
    removals += await store.replanDoneRemovals(jobId, entity, [...keys])
  }
  return { items, removals }
}
