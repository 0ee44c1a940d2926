/**
 * The little SQL that differs between Postgres, MySQL/MariaDB and SQLite: identifier quoting,
 * parameter placeholders and the keyset ("seek") condition. Everything here is pure, so the SQL a
 * connector sends can be unit-tested without a database.
 */
import type { Cursor } from '../../src/model/connector.ts'
import type { SqlEngine } from './source-url.ts'

export interface Dialect {
  readonly engine: SqlEngine
  /** Quotes an identifier (`"name"` or `` `name` ``), doubling embedded quotes. */
  quote(identifier: string): string
  /** The placeholder for the `index`-th parameter (1-based): `$1` on Postgres, `?` elsewhere. */
  placeholder(index: number): string
  /**
   * True when the row-value comparison `(a, b) > (?, ?)` is used. MySQL/MariaDB get the expanded
   * form instead (`a > ? OR (a = ? AND b > ?)`), which their range optimiser handles.
   */
  readonly rowValues: boolean
}

export const DIALECTS: { readonly [E in SqlEngine]: Dialect } = {
  postgres: {
    engine: 'postgres',
    quote: (id) => `"${id.replaceAll('"', '""')}"`,
    placeholder: (i) => `$${i}`,
    rowValues: true,
  },
  mysql: {
    engine: 'mysql',
    quote: (id) => `\`${id.replaceAll('`', '``')}\``,
    placeholder: () => '?',
    rowValues: false,
  },
  sqlite: {
    engine: 'sqlite',
    quote: (id) => `"${id.replaceAll('"', '""')}"`,
    placeholder: () => '?',
    rowValues: true,
  },
}

/** Collects parameters in the order their placeholders appear in the SQL text. */
export class Params {
  readonly values: unknown[] = []
  readonly #dialect: Dialect
  constructor(dialect: Dialect) {
    this.#dialect = dialect
  }
  /** Adds a value and returns its placeholder. Call in the order the SQL text is written. */
  add(value: unknown): string {
    this.values.push(value)
    return this.#dialect.placeholder(this.values.length)
  }
}

/** A key column of a keyset: the SQL expression to compare and order by, and its name in the cursor. */
export interface KeyColumn {
  /** SQL expression, already quoted (e.g. `"p"."createat"` or `src."sent_at"`). */
  readonly expr: string
  /** The name under which the cursor stores its value (and the row holds it). */
  readonly name: string
  /**
   * True for a character column. On MySQL/MariaDB its default collations are case- and
   * accent-insensitive (`Bob` = `bob`), so such a key is ordered and compared by its collation and
   * then by its bytes ({@link keyTerms}): twins stay distinct keys and none is skipped at a page
   * boundary.
   */
  readonly text?: boolean
}

/**
 * The terms a keyset orders and compares by, in order: each key, and on MySQL/MariaDB after each
 * text key its `BINARY` form as a tie-break. The natural term comes first, so an index on the
 * first key still serves the range; the tie-break makes the order total where the collation is not.
 */
export function keyTerms(dialect: Dialect, keys: readonly KeyColumn[]): KeyColumn[] {
  if (keys.length === 0) {
    throw new TypeError('a keyset needs at least one key column')
  }
  if (dialect.engine !== 'mysql') {
    return [...keys]
  }
  return keys.flatMap((k) => (k.text ? [k, { name: k.name, expr: `BINARY ${k.expr}` }] : [k]))
}

function cursorValues(keys: readonly KeyColumn[], cursor: Cursor): unknown[] {
  return keys.map((k) => {
    if (!(k.name in cursor)) {
      throw new TypeError(`cursor ${JSON.stringify(cursor)} lacks the key ${k.name}`)
    }
    return cursor[k.name]
  })
}

/**
 * The condition "strictly after `after`" over the key columns, in key order. Keys are compared
 * together, so rows sharing a timestamp are neither skipped nor repeated across pages.
 */
export function keysetCondition(dialect: Dialect, keys: readonly KeyColumn[], after: Cursor, params: Params): string {
  const terms = keyTerms(dialect, keys)
  const values = cursorValues(terms, after)
  const first = terms[0] as KeyColumn
  if (terms.length === 1) {
    return `${first.expr} > ${params.add(values[0])}`
  }
  // The redundant leading `>=` lets an index on the first key alone (Mattermost's
  // idx_posts_create_at) serve as a range scan; without it each page could scan the table.
  const lead = `${first.expr} >= ${params.add(values[0])}`
  if (dialect.rowValues) {
    const left = terms.map((k) => k.expr).join(', ')
    const right = values.map((v) => params.add(v)).join(', ')
    return `${lead} AND (${left}) > (${right})`
  }
  const alternatives: string[] = []
  for (let i = 0; i < terms.length; i++) {
    const parts: string[] = []
    for (let j = 0; j < i; j++) {
      parts.push(`${(terms[j] as KeyColumn).expr} = ${params.add(values[j])}`)
    }
    parts.push(`${(terms[i] as KeyColumn).expr} > ${params.add(values[i])}`)
    alternatives.push(parts.length === 1 ? (parts[0] as string) : `(${parts.join(' AND ')})`)
  }
  return `${lead} AND (${alternatives.join(' OR ')})`
}

export interface KeysetQuery {
  /** The select list, e.g. `src.*`. */
  readonly select: string
  /** Everything between FROM and WHERE: tables, joins, a wrapped subquery. */
  readonly from: string
  readonly keys: readonly KeyColumn[]
  /** Resume after this cursor; from the start when absent. */
  readonly after?: Cursor | undefined
  /** At most this many rows. */
  readonly limit: number
  /** Further conditions, written with the same `params` (in text order: they precede the keyset). */
  readonly where?: (params: Params) => readonly string[]
}

/** `k1 IS NOT NULL AND k2 IS NOT NULL …`: the keyset pass reads only rows it can order and resume. */
function keysNotNull(keys: readonly KeyColumn[]): string[] {
  return keys.map((k) => `${k.expr} IS NOT NULL`)
}

function whereClause(conditions: readonly string[]): string {
  return conditions.length > 0 ? ` WHERE ${conditions.join(' AND ')}` : ''
}

/**
 * `SELECT … FROM … WHERE <conditions> AND <keys not null> AND <keyset> ORDER BY <key terms> LIMIT n`
 * — never OFFSET. Rows with a NULL key are left to {@link buildNullKeyQuery}.
 */
export function buildKeysetQuery(dialect: Dialect, q: KeysetQuery): { sql: string; params: unknown[] } {
  checkLimit(q.limit)
  const params = new Params(dialect)
  const conditions = [...(q.where?.(params) ?? []), ...keysNotNull(q.keys)]
  if (q.after !== undefined) {
    conditions.push(keysetCondition(dialect, q.keys, q.after, params))
  }
  const order = keyTerms(dialect, q.keys)
    .map((k) => k.expr)
    .join(', ')
  return { sql: `SELECT ${q.select} FROM ${q.from}${whereClause(conditions)} ORDER BY ${order} LIMIT ${q.limit}`, params: params.values }
}

/**
 * Every row whose key equals `key` in every key term (on MySQL/MariaDB: byte for byte), at most
 * `limit`: the rest of a key group that a page's limit cut through.
 */
export function buildKeyEqualsQuery(dialect: Dialect, q: Omit<KeysetQuery, 'after'>, key: Cursor): { sql: string; params: unknown[] } {
  checkLimit(q.limit)
  const params = new Params(dialect)
  const conditions = [...(q.where?.(params) ?? []), ...keysNotNull(q.keys)]
  const terms = keyTerms(dialect, q.keys)
  const values = cursorValues(terms, key)
  terms.forEach((t, i) => conditions.push(`${t.expr} = ${params.add(values[i])}`))
  return { sql: `SELECT ${q.select} FROM ${q.from}${whereClause(conditions)} LIMIT ${q.limit}`, params: params.values }
}

/**
 * The rows a keyset cannot read: those with a NULL in any key column, ordered by which keys are
 * NULL and then by the others (the same on every engine), `limit` rows from `offset`. Rows that tie
 * have the same key values, so they yield the same problem whichever comes first.
 */
export function buildNullKeyQuery(dialect: Dialect, q: Omit<KeysetQuery, 'after'> & { readonly offset: number }): { sql: string; params: unknown[] } {
  checkLimit(q.limit)
  if (!Number.isInteger(q.offset) || q.offset < 0) {
    throw new TypeError(`Expected offset to be a non-negative integer, got ${q.offset}`)
  }
  const params = new Params(dialect)
  const conditions = [...(q.where?.(params) ?? []), `(${q.keys.map((k) => `${k.expr} IS NULL`).join(' OR ')})`]
  const order = [...q.keys.map((k) => `(${k.expr} IS NULL)`), ...keyTerms(dialect, q.keys).map((k) => k.expr)].join(', ')
  const offset = q.offset > 0 ? ` OFFSET ${q.offset}` : ''
  return { sql: `SELECT ${q.select} FROM ${q.from}${whereClause(conditions)} ORDER BY ${order} LIMIT ${q.limit}${offset}`, params: params.values }
}

/**
 * The terms a legacy id is grouped and compared by: its columns, on MySQL/MariaDB a character
 * column by its bytes (`BINARY id`). Ids a case-insensitive collation calls equal (`Bob`, `bob`)
 * are two ids, as they are two keys in {@link keyTerms}; grouping by the collation would fetch
 * such twins as duplicates (the caller tells them apart again, but they would count against its cap).
 */
export function idTerms(dialect: Dialect, ids: readonly KeyColumn[]): string[] {
  if (ids.length === 0) {
    throw new TypeError('a legacy id needs at least one column')
  }
  return ids.map((k) => (dialect.engine === 'mysql' && k.text ? `BINARY ${k.expr}` : k.expr))
}

/**
 * The id and key columns of every keyed row (no NULL key, no NULL id column) whose legacy id
 * occurs in more than one such row, in the keyset's order, at most `limit` rows:
 * `SELECT <ids>, <keys> FROM … WHERE … AND (<ids>) IN (SELECT <ids> FROM … WHERE … GROUP BY <ids>
 * HAVING count(*) > 1) ORDER BY <key terms> LIMIT n`. The inner query reuses the outer's alias,
 * which shadows it, so both read the same rows under the same conditions.
 */
export function buildDuplicateIdQuery(
  dialect: Dialect,
  q: Pick<KeysetQuery, 'from' | 'where' | 'keys' | 'limit'> & { readonly ids: readonly KeyColumn[] },
): { sql: string; params: unknown[] } {
  checkLimit(q.limit)
  const params = new Params(dialect)
  const ids = idTerms(dialect, q.ids).join(', ')
  const all = [...new Map([...q.ids, ...q.keys].map((k) => [k.name, k])).values()]
  const notNull = keysNotNull(all)
  const conditions = [...(q.where?.(params) ?? []), ...notNull]
  const inner = `SELECT ${ids} FROM ${q.from}${whereClause([...(q.where?.(params) ?? []), ...notNull])} GROUP BY ${ids} HAVING count(*) > 1`
  conditions.push(`(${ids}) IN (${inner})`)
  const columns = all.map((k) => `${k.expr} AS ${dialect.quote(k.name)}`)
  const order = keyTerms(dialect, q.keys)
    .map((k) => k.expr)
    .join(', ')
  return {
    sql: `SELECT ${columns.join(', ')} FROM ${q.from}${whereClause(conditions)} ORDER BY ${order} LIMIT ${q.limit}`,
    params: params.values,
  }
}

function checkLimit(limit: number): void {
  if (!Number.isInteger(limit) || limit < 1) {
    throw new TypeError(`Expected limit to be a positive integer, got ${limit}`)
  }
}

/** `SELECT count(*) AS n FROM … WHERE …`. */
export function buildCountQuery(dialect: Dialect, q: Pick<KeysetQuery, 'from' | 'where'>): { sql: string; params: unknown[] } {
  const params = new Params(dialect)
  return { sql: `SELECT count(*) AS n FROM ${q.from}${whereClause(q.where?.(params) ?? [])}`, params: params.values }
}

/** A key value as a cursor holds it: JSON-safe, and equal for equal keys. */
function keyValue(v: unknown): string | number | null {
  if (v === null || v === undefined) {
    return null
  }
  if (typeof v === 'number' || typeof v === 'string') {
    return v
  }
  if (typeof v === 'bigint') {
    return Number.isSafeInteger(Number(v)) ? Number(v) : v.toString()
  }
  if (v instanceof Date) {
    return v.toISOString()
  }
  return String(v)
}

/** The cursor of a raw row: the values of its key columns, JSON-safe. */
export function cursorOf(row: Record<string, unknown>, keys: readonly KeyColumn[]): Cursor {
  const cursor: Record<string, string | number | null> = {}
  for (const k of keys) {
    cursor[k.name] = keyValue(row[k.name])
  }
  return cursor
}

/**
 * True when two raw rows have the same key, value for value as the driver returned them (the
 * drivers return timestamps and decimals as the server's text, so equal text is an equal key).
 */
export function sameKey(a: Record<string, unknown>, b: Record<string, unknown>, keys: readonly KeyColumn[]): boolean {
  for (const k of keys) {
    if (keyValue(a[k.name]) !== keyValue(b[k.name])) {
      return false
    }
  }
  return true
}
