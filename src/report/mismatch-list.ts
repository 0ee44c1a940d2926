/** The mismatches a verify finds: every one counted, the first {@link MAX_LISTED_MISMATCHES} listed. */
import type { Mismatch } from './schema.ts'

/** Mismatches listed in a report; the rest are counted. */
export const MAX_LISTED_MISMATCHES = 2000

export interface MismatchList {
  /** Counts a mismatch, and lists it while the list has room. */
  add(m: Mismatch): void
  readonly listed: Mismatch[]
  /** Mismatches beyond the list. */
  readonly notListed: number
  readonly total: number
  /** Mismatches the ledger does not explain: any of them fails the verify. */
  readonly unexplained: number
}

export function createMismatchList(): MismatchList {
  const listed: Mismatch[] = []
  let notListed = 0
  let unexplained = 0
  let total = 0
  return {
    add(m) {
      total++
      if (!m.explained) {
        unexplained++
      }
      if (listed.length < MAX_LISTED_MISMATCHES) {
        listed.push(m)
      } else {
        notListed++
      }
    },
    listed,
    get notListed() {
      return notListed
    },
    get total() {
      return total
    },
    get unexplained() {
      return unexplained
    },
  }
}
