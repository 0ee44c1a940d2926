/**
 * One legacy id in rows of different keys. When an entity's keys are not just its id columns
 * (generic-sql messages: `(sent_at, id)`), two rows can share an id under two keys: both are read,
 * both map to one target key, and the later would silently replace the earlier in the ledger.
 * Which row is kept is decided here, before the read, from the whole snapshot: the row with the
 * smallest key of its id in the keyset's order. That depends neither on the page size nor on where
 * a read resumes, so a resumed read, a delta read and two planners at once all agree. Every other
 * row of the id becomes a problem naming the kept row.
 */
import type { RowProblem } from '../../src/model/connector.ts'
import { buildDuplicateIdQuery, cursorOf, type KeyColumn, type KeysetQuery, sameKey } from './dialect.ts'
import type { SnapshotConnection } from './snapshot-connection.ts'

/** The most rows of duplicated legacy ids one read holds in memory. */
export const MAX_DUPLICATE_ID_ROWS = 100_000

type Row = Record<string, unknown>

/** A row that is no record because another row holds its legacy id, or `undefined` when it is kept. */
export type DuplicateIdScreen = (row: Row) => RowProblem | undefined

export interface DuplicateIdSpec {
  readonly conn: SnapshotConnection
  /** For error messages: `messages`… */
  readonly entity: string
  /** The columns the legacy id is made of (`id`; members `group_id, user_id`). */
  readonly ids: readonly KeyColumn[]
  readonly keys: readonly KeyColumn[]
  /**
   * The rows the id must be unique among. The whole query, also in delta mode: a delta read that
   * sees only a later row of an id must still not take it for the kept one.
   */
  readonly query: Pick<KeysetQuery, 'from' | 'where'>
  /** The legacy id of a raw row, for problems. */
  legacyIdOf(row: Row): string
}

/**
 * True when rows of one legacy id can have different keys: some key column is not an id column.
 * Otherwise rows sharing an id share their key and are duplicate-key problems already.
 */
export function idsCanRepeat(ids: readonly KeyColumn[], keys: readonly KeyColumn[]): boolean {
  const names = new Set(ids.map((k) => k.name))
  return keys.some((k) => !names.has(k.name))
}

const idOf = (row: Row, ids: readonly KeyColumn[]): string => JSON.stringify(Object.values(cursorOf(row, ids)))

/** `(sent_at=2024-03-01 12:00:00, id=m-17)`. */
function keyText(row: Row, keys: readonly KeyColumn[]): string {
  return `(${Object.entries(cursorOf(row, keys))
    .map(([name, v]) => `${name}=${v}`)
    .join(', ')})`
}

/**
 * Runs the one grouped query and returns the screen the read applies to each row: for each
 * duplicated id, its distinct keys in key order (the first is kept). More than
 * {@link MAX_DUPLICATE_ID_ROWS} such rows stop the read with an error naming the entity.
 */
export async function findDuplicateIds(spec: DuplicateIdSpec): Promise<DuplicateIdScreen> {
  const q = buildDuplicateIdQuery(spec.conn.dialect, { ...spec.query, ids: spec.ids, keys: spec.keys, limit: MAX_DUPLICATE_ID_ROWS + 1 })
  const rows = (await spec.conn.query(q.sql, q.params, `finding ${spec.entity} ids in more than one row`)).rows
  if (rows.length > MAX_DUPLICATE_ID_ROWS) {
    const ids = spec.ids.map((k) => k.name).join(', ')
    throw new Error(
      `${spec.entity}: more than ${MAX_DUPLICATE_ID_ROWS} rows share their legacy id (${ids}) with another row of a different key; ` +
        `make the ${spec.entity} query return each id once, or make its keys the id columns (${ids}) so that repeats are read as duplicate keys`,
    )
  }
  const keysById = new Map<string, Row[]>()
  for (const row of rows) {
    const id = idOf(row, spec.ids)
    const seen = keysById.get(id)
    if (seen === undefined) {
      keysById.set(id, [row])
    } else if (!sameKey(seen[seen.length - 1] as Row, row, spec.keys)) {
      seen.push(row)
    }
  }
  return (row) => screen(spec, keysById, row)
}

function screen(spec: DuplicateIdSpec, keysById: ReadonlyMap<string, readonly Row[]>, row: Row): RowProblem | undefined {
  const keys = keysById.get(idOf(row, spec.ids))
  if (keys === undefined) {
    return undefined
  }
  const rank = keys.findIndex((k) => sameKey(k, row, spec.keys))
  if (rank === 0) {
    return undefined
  }
  if (rank < 0) {
    // One snapshot answers both queries alike; a miss means the two disagree on the key's values.
    throw new Error(`${spec.entity}: the row with key ${keyText(row, spec.keys)} was not found by the duplicate-id query of the same snapshot`)
  }
  const legacyId = spec.legacyIdOf(row)
  return {
    ok: false,
    legacyId,
    field: spec.ids.map((k) => k.name).join(', '),
    reason: `duplicate id ${legacyId}: also in the row with key ${keyText(keys[0] as Row, spec.keys)}, which is kept; this row's key is ${keyText(row, spec.keys)}, it is not imported`,
    instance: `duplicate-id-${rank + 1}`,
  }
}
