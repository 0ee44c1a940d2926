/**
 * What the platform's per-item answers mean for the ledger: a pure function, so that the rule is
 * in one place and table-tested (test/unit/load/settle-item-results.test.ts).
 */
import type { BatchItem, ItemSettlement } from '../state/batch-ledger.ts'
import type { ImportResult } from '../target/client.ts'

/** Per-item error codes that mean the platform already has the item: done, already present. */
export const ALREADY_PRESENT_CODES: ReadonlySet<string> = new Set([
  'ERR_UID_ALREADY_EXISTS',
  'ERR_GUID_ALREADY_EXISTS',
  'ERR_ALREADY_JOINED',
  'ERR_IMPORT_MUID_ALREADY_EXISTS',
])

/**
 * The platform's own id of an item from its success answer, when it has one besides our key: a
 * message's numeric id (`data.id`, or `data.data.id` in the nested variant, facts §1.5). The update
 * lane edits and deletes messages by this id (`PUT`/`DELETE /messages/{id}`). Users, groups and
 * members answer no `id`: their key is their platform id.
 */
export function platformIdOf(data: unknown): string | undefined {
  const idOf = (o: unknown): string | undefined => {
    if (o === null || typeof o !== 'object') {
      return undefined
    }
    const id = (o as { id?: unknown }).id
    return typeof id === 'string' && id !== '' ? id : typeof id === 'number' && Number.isSafeInteger(id) ? String(id) : undefined
  }
  return idOf(data) ?? idOf((data as { data?: unknown } | null | undefined)?.data)
}

/** How many items of a batch ended done, rejected, or planned again. */
export interface SettlementTally {
  done: number
  rejected: number
  requeued: number
}

/**
 * The fate of each item of a batch from the answer: success → done/created; an already-present
 * code → done/already_present (with the code); any other code → rejected; an item the answer does
 * not mention → planned again. Items keep the batch's order.
 */
export function settleItemResults(
  items: readonly BatchItem[],
  results: ImportResult['results'],
): { items: ItemSettlement[]; tally: SettlementTally } {
  const tally: SettlementTally = { done: 0, rejected: 0, requeued: 0 }
  const settled = items.map((item): ItemSettlement => {
    const r = results.get(item.key)
    const base = { id: item.id, hash: item.hash }
    if (r === undefined) {
      tally.requeued++
      return { ...base, status: 'planned', doneReason: null, code: null, message: null }
    }
    if (r.ok) {
      tally.done++
      const platformId = platformIdOf(r.data)
      return { ...base, status: 'done', doneReason: 'created', code: null, message: null, ...(platformId !== undefined ? { platformId } : {}) }
    }
    if (ALREADY_PRESENT_CODES.has(r.code)) {
      tally.done++
      return { ...base, status: 'done', doneReason: 'already_present', code: r.code, message: r.message }
    }
    tally.rejected++
    return { ...base, status: 'rejected', doneReason: null, code: r.code, message: r.message }
  })
  return { items: settled, tally }
}
