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
}

/**
 * The condition "strictly after `after`" over the key columns, in key order. Keys are compared
 * together, so rows sharing a timestamp are neither skipped nor repeated across pages.
 */
export function keysetCondition(dialect: Dialect, keys: readonly KeyColumn[], after: Cursor, params: Params): string {
  if (keys.length === 0) throw new TypeError('a keyset needs at least one key column')
  const values = keys.map((k) => {
    if (!(k.name in after)) throw new TypeError(`cursor ${JSON.stringify(after)} lacks the key ${k.name}`)
    return after[k.name]
  })
  const first = keys[0] as KeyColumn
  if (keys.length === 1) return `${first.expr} > ${params.add(values[0])}`
  // The redundant leading `>=` lets an index on the first key alone (Mattermost's
  // idx_posts_create_at) serve as a range scan; without it each page could scan the table.
  const lead = `${first.expr} >= ${params.add(values[0])}`
  if (dialect.rowValues) {
    const left = keys.map((k) => k.expr).join(', ')
    const right = values.map((v) => params.add(v)).join(', ')
    return `${lead} AND (${left}) > (${right})`
  }
  const alternatives: string[] = []
  for (let i = 0; i < keys.length; i++) {
    const parts: string[] = []
    for (let j = 0; j < i; j++) parts.push(`${(keys[j] as KeyColumn).expr} = ${params.add(values[j])}`)
    parts.push(`${(keys[i] as KeyColumn).expr} > ${params.add(values[i])}`)
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

/** `SELECT … FROM … WHERE <conditions> AND <keyset> ORDER BY <keys> LIMIT n` — never OFFSET. */
export function buildKeysetQuery(dialect: Dialect, q: KeysetQuery): { sql: string; params: unknown[] } {
  if (!Number.isInteger(q.limit) || q.limit < 1) throw new TypeError(`Expected limit to be a positive integer, got ${q.limit}`)
  const params = new Params(dialect)
  const conditions = [...(q.where?.(params) ?? [])]
  if (q.after !== undefined) conditions.push(keysetCondition(dialect, q.keys, q.after, params))
  const where = conditions.length > 0 ? ` WHERE ${conditions.join(' AND ')}` : ''
  const order = q.keys.map((k) => k.expr).join(', ')
  return { sql: `SELECT ${q.select} FROM ${q.from}${where} ORDER BY ${order} LIMIT ${q.limit}`, params: params.values }
}

/** `SELECT count(*) AS n FROM … WHERE …`. */
export function buildCountQuery(
  dialect: Dialect,
  q: Pick<KeysetQuery, 'from' | 'where'>,
): { sql: string; params: unknown[] } {
  const params = new Params(dialect)
  const conditions = q.where?.(params) ?? []
  const where = conditions.length > 0 ? ` WHERE ${conditions.join(' AND ')}` : ''
  return { sql: `SELECT count(*) AS n FROM ${q.from}${where}`, params: params.values }
}

/** The cursor of a raw row: the values of its key columns, JSON-safe. */
export function cursorOf(row: Record<string, unknown>, keys: readonly KeyColumn[]): Cursor {
  const cursor: Record<string, string | number | null> = {}
  for (const k of keys) {
    const v = row[k.name]
    if (v === null || v === undefined) cursor[k.name] = null
    else if (typeof v === 'number' || typeof v === 'string') cursor[k.name] = v
    else if (typeof v === 'bigint') cursor[k.name] = Number.isSafeInteger(Number(v)) ? Number(v) : v.toString()
    else if (v instanceof Date) cursor[k.name] = v.toISOString()
    else cursor[k.name] = String(v)
  }
  return cursor
}
