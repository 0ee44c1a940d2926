/**
 * The key-set comparison behind vanished items and the key reconciliation: the legacy ids a
 * keys-only read of the source yields go into a temporary table of one connection, then
 * - vanished items: the job's done items of the entity are read in pages, anti-joined with it.
 *   Memory stays flat (one page of keys, one page of items); the cost is one insert per source key
 *   and one index probe per done item (see `select-vanished-items.ts`);
 * - keys the ledger never planned: the table anti-joined with the job's items of the entity, in
 *   any status (`select-unplanned-keys.ts`), the legacy ids returned.
 * One read of the source's keys serves both when a delta wants both.
 */
import type { Kysely } from 'kysely'

import type { StateDatabase } from './schema.ts'
import { countVanishedItems } from './sql/count-vanished-items.ts'
import { createSeenKeysTable } from './sql/create-seen-keys-table.ts'
import { dropSeenKeysTable } from './sql/drop-seen-keys-table.ts'
import { hasLoadedItems } from './sql/has-loaded-items.ts'
import { insertSeenKeys } from './sql/insert-seen-keys.ts'
import { selectUnplannedKeys } from './sql/select-unplanned-keys.ts'
import { selectVanishedItems, type VanishedAfter, type VanishedItemRow } from './sql/select-vanished-items.ts'

export type { VanishedItemRow }

/** Done items read per page of the comparison. */
const PAGE = 1000

/** What a comparison found. */
export interface VanishedScan {
  /** Loaded items gone from the source. */
  readonly vanished: number
  /** Loaded items the comparison looked at. */
  readonly loaded: number
  /** True when `allow` refused the result: no page was handed on. */
  readonly refused: boolean
}

/** Whether a comparison that finds `gone` of `loaded` items gone may go on (a guard against a source that lost its rows). */
export type VanishedGate = (gone: number, loaded: number) => boolean

/** What one read of the source's keys is compared for. */
export interface KeyScanWant {
  /** The vanished items: handed to `onPage` page by page once `allow` says yes. */
  readonly vanished?: { readonly onPage: (items: VanishedItemRow[]) => Promise<void>; readonly allow?: VanishedGate }
  /** Also return the source's keys the ledger holds no item of (the key reconciliation). */
  readonly unplanned?: boolean
}

/** What {@link scanKeys} found. */
export interface KeyScan {
  /** Absent when vanished items were not asked for. */
  readonly vanished: VanishedScan | undefined
  /** The source's legacy ids with no item in the ledger, in order; empty when not asked for. */
  readonly unplanned: string[]
}

/**
 * Runs the comparison on `conn` (a dedicated connection): counts what it finds, asks `allow`, then
 * calls `onPage` with each page of vanished items, in order. The temporary table is dropped at the end.
 */
export async function scanVanished(
  conn: Kysely<StateDatabase>,
  jobId: string,
  entity: string,
  sourceKeys: AsyncIterable<readonly string[]>,
  onPage: (items: VanishedItemRow[]) => Promise<void>,
  allow: VanishedGate = () => true,
): Promise<VanishedScan> {
  // Nothing loaded (a first plan, an entity not loaded yet): nothing can have vanished, and the
  // source's keys are not read at all (on a large source, a second read of every key).
  if (!(await hasLoadedItems(conn, jobId, entity))) {
    return { vanished: 0, loaded: 0, refused: false }
  }
  const scan = await scanKeys(conn, jobId, entity, sourceKeys, { vanished: { onPage, allow } })
  return scan.vanished as VanishedScan
}

/** The source's keys into the temporary table, then what `want` asks of them; the table is dropped at the end. */
export async function scanKeys(
  conn: Kysely<StateDatabase>,
  jobId: string,
  entity: string,
  sourceKeys: AsyncIterable<readonly string[]>,
  want: KeyScanWant,
): Promise<KeyScan> {
  await createSeenKeysTable(conn)
  try {
    for await (const keys of sourceKeys) {
      await insertSeenKeys(conn, keys)
    }
    const unplanned = want.unplanned === true ? await selectUnplannedKeys(conn, jobId, entity) : []
    const vanished = want.vanished ? await vanishedItems(conn, jobId, entity, want.vanished.onPage, want.vanished.allow ?? (() => true)) : undefined
    return { vanished, unplanned }
  } finally {
    await dropSeenKeysTable(conn).catch(() => {})
  }
}

/** The vanished side of a scan, on the filled temporary table. */
async function vanishedItems(
  conn: Kysely<StateDatabase>,
  jobId: string,
  entity: string,
  onPage: (items: VanishedItemRow[]) => Promise<void>,
  allow: VanishedGate,
): Promise<VanishedScan> {
  const { gone, loaded } = await countVanishedItems(conn, jobId, entity)
  if (gone === 0 || !allow(gone, loaded)) {
    return { vanished: gone, loaded, refused: gone > 0 }
  }
  let after: VanishedAfter | undefined
  let n = 0
  for (;;) {
    const rows = await selectVanishedItems(conn, jobId, entity, after, PAGE)
    if (rows.length === 0) {
      return { vanished: n, loaded, refused: false }
    }
    n += rows.length
    await onPage(rows)
    const last = rows[rows.length - 1] as VanishedItemRow
    after = { legacyId: last.legacyId, id: last.id }
  }
}
