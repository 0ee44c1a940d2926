/**
 * What to do with the rows of a failed message request after reading it back (pure; the reading
 * is read-back.ts, the ledger's side `store.batches.isolate`). A row found on the platform is done.
 * A row not found has not been proven bad: the platform's documented answer to a bad row (every
 * good row written, then 500 `ERR_EXCEPTION`) names no row, a platform that stops at the bad row
 * leaves the good rows after it unwritten, and a 500 after a partial commit of a good request
 * (an internal failure) leaves some unwritten with no bad row at all. So a row is rejected only on
 * the platform's word about that row — its own per-item error, or a 500 to a request that held
 * only it — and the rows not found go again, arranged to isolate a bad row cheaply:
 *
 * - a row not found *before* the last row found (a hole: the platform went on past it, as one that
 *   writes every good row does) is a suspect: up to {@link MAX_HOLES_ALONE} holes each go **alone**
 *   (one request each, the least that can prove a row bad); of more holes (more bad rows in one
 *   batch than is likely: rather a partial write of a good request) the first goes alone and the
 *   others **together** in a batch of their own, which isolates again if it fails;
 * - of the rows after the last row found (the tail: all of them when none was found), the first
 *   is the prime suspect (where a platform that stops at the bad row stopped, or a write was cut
 *   short): it goes **alone**; the others were most likely never reached, and are **planned
 *   again**, so the packer puts them into the next full batches.
 */
import type { ItemResult } from '../target/client.ts'
import type { LandedRows, RowShape } from './landed-rows.ts'

/** The code recorded on a batch the loader isolated (its single-row children are suspects: a 500 to one of them rejects it). */
export const ISOLATION_CODE = 'BAD_ROW_ISOLATION'

/** The most holes sent alone each; beyond, the first alone and the others together. */
export const MAX_HOLES_ALONE = 2

export interface Isolation {
  /** The rows found on the platform: done, with the listed message as the data. */
  readonly landed: ReadonlyMap<string, ItemResult>
  /** Rows sent next in a request of their own. */
  readonly alone: readonly string[]
  /** Rows sent next together, in one batch of their own. */
  readonly together: readonly string[]
  /** Rows planned again (packed with the next rows). */
  readonly again: readonly string[]
}

/** Splits the batch's rows (in request order) by what the read-back found. */
export function isolateRows(rows: readonly RowShape[], found: LandedRows): Isolation {
  const landed = new Map<string, ItemResult>()
  const missing: { key: string; at: number }[] = []
  let lastLanded = -1
  for (const [at, r] of rows.entries()) {
    if (found.has(r.key)) {
      landed.set(r.key, { ok: true, data: found.listed(r.key) })
      lastLanded = at
    } else {
      missing.push({ key: r.key, at })
    }
  }
  const holes = missing.filter((m) => m.at < lastLanded).map((m) => m.key)
  const tail = missing.filter((m) => m.at > lastLanded).map((m) => m.key)
  const holesAlone = holes.length <= MAX_HOLES_ALONE ? holes : holes.slice(0, 1)
  return {
    landed,
    alone: [...holesAlone, ...tail.slice(0, 1)],
    together: holes.length <= MAX_HOLES_ALONE ? [] : holes.slice(1),
    again: tail.slice(1),
  }
}

/** The reason recorded on the isolated batch. */
export function isolationMessage(batchId: number, rows: number, iso: Isolation, platformCode: string): string {
  return (
    `HTTP 500 ${platformCode} to ${rows} rows; read back: ${iso.landed.size} written; ` +
    `${iso.alone.length} sent alone (${iso.alone.join(', ')}), ${iso.together.length} together, ${iso.again.length} planned again (batch ${batchId})`
  )
}

/** The reason a suspect sent alone is rejected with: the platform's own answer (`err.message` names the request, the status, the code and its text) to a request that held only it. */
export function suspectRejection(errMessage: string): string {
  return (
    `sent alone after a request it was in failed with HTTP 500 and reading that batch back did not find it written, ` +
    `and the platform refused this row alone: ${errMessage}. See \`chatferry rejects\`; after fixing the cause (e.g. a sender ` +
    `or receiver the platform does not hold, a sentAt outside its retention window), \`chatferry retry-rejected\` plans it ` +
    `again and the next load sends it`
  )
}
