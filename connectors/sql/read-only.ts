/**
 * How a source stays read-only, whatever a query asks: the error chatferry stops with when a
 * statement would write, lock or end the read-only transaction (`ReadOnlyRefusal`, exit 2: a rerun
 * cannot fix it), which driver errors are such refusals, and the source URL settings that would
 * let a connection run several statements per query (refused). The session that enforces it is
 * `snapshot-connection.ts`; the statement text check is `statement-check.ts`.
 */
import { ChatferryError } from '../../src/errors.ts'
import { describeSource, scrubSecret, type SqlEngine } from './source-url.ts'
import { statementProblems } from './statement-check.ts'

/**
 * A statement the read-only session refuses to send, or the database refused because it would
 * write, take row locks or end the transaction. `SOURCE_INVALID`: fix the query, then run again.
 */
export class ReadOnlyRefusal extends ChatferryError {
  /** What was refused, without the source: `the statement is more than one statement…`. */
  readonly reason: string
  constructor(url: string, what: string, reason: string, cause?: unknown) {
    super('SOURCE_INVALID', `${what} refused: chatferry reads the source read-only, and ${reason} (${describeSource(url)})`, { cause })
    this.name = 'ReadOnlyRefusal'
    this.reason = reason
  }
}

/**
 * Throws a {@link ReadOnlyRefusal} when `sql` is not one plain SELECT that takes no locks
 * (`statement-check.ts`): checked before a statement is sent.
 */
export function assertReadOnlyStatement(url: string, engine: SqlEngine, sql: string, what: string): void {
  const problems = statementProblems(sql, engine)
  if (!/^\s*SELECT\b/i.test(sql)) {
    problems.unshift('is not a SELECT')
  }
  if (problems.length > 0) {
    throw new ReadOnlyRefusal(url, what, `the statement ${problems.join('; it ')}`)
  }
}

const PG_REFUSALS: Readonly<Record<string, true>> = {
  /** read_only_sql_transaction: a write, a locking read, nextval()… */
  '25006': true,
  /** active_sql_transaction: changing the transaction's characteristics inside it. */
  '25001': true,
  /** invalid_transaction_termination: COMMIT/ROLLBACK inside a function. */
  '2D000': true,
  /** invalid_transaction_initiation. */
  '0B000': true,
}

// ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION, ER_CANT_CHANGE_TX_CHARACTERISTICS,
// ER_COMMIT_NOT_ALLOWED_IN_SF_OR_TRG, ER_OPTION_PREVENTS_STATEMENT (--read-only), ER_READ_ONLY_MODE.
const MYSQL_REFUSALS = [1792, 1568, 1422, 1290, 1836]

/**
 * The reason a driver's error says the database refused a write, a lock, a second statement or
 * the end of the transaction; `undefined` for any other error.
 */
export function refusalReason(engine: SqlEngine, cause: unknown): string | undefined {
  const err = cause as { code?: unknown; errno?: unknown; errcode?: unknown; message?: unknown } | null
  if (err === null || typeof err !== 'object') {
    return undefined
  }
  const message = String(err.message ?? '')
  switch (engine) {
    case 'postgres': {
      const code = typeof err.code === 'string' ? err.code : ''
      if (code === '42601' && /multiple commands/.test(message)) {
        return 'the statement is more than one statement'
      }
      if (PG_REFUSALS[code] === true || (code === '0A000' && /data-modifying/.test(message))) {
        return 'the statement tries to write, to lock rows or to end the read-only transaction'
      }
      return undefined
    }
    case 'mysql':
      return typeof err.errno === 'number' && MYSQL_REFUSALS.includes(err.errno)
        ? 'the statement tries to write, to lock rows or to end the read-only transaction'
        : undefined
    case 'sqlite':
      // SQLITE_READONLY (8): a write on a read-only connection or under PRAGMA query_only.
      return err.errcode === 8 || /readonly database|within a transaction|no transaction is active/.test(message)
        ? 'the statement tries to write or to end the read-only transaction'
        : undefined
  }
}

/** The refusal a driver's error is, with the database's own words, or `undefined`. */
export function asRefusal(url: string, engine: SqlEngine, what: string, cause: unknown): ReadOnlyRefusal | undefined {
  const reason = refusalReason(engine, cause)
  if (reason === undefined) {
    return undefined
  }
  const detail = cause instanceof Error ? scrubSecret(cause.message, url) : ''
  return new ReadOnlyRefusal(url, what, detail === '' ? reason : `${reason}: ${detail}`, cause)
}

/**
 * Settings a MySQL/MariaDB source URL must not carry: `multipleStatements` and `flags` (which can
 * turn on `MULTI_STATEMENTS`) would let one query run several statements. Empty for other URLs.
 */
export function urlReadOnlyProblems(url: string): string[] {
  if (!/^(mysql|mariadb):/i.test(url)) {
    return []
  }
  let params: URLSearchParams
  try {
    params = new URL(url).searchParams
  } catch {
    return []
  }
  return ['multipleStatements', 'flags']
    .filter((name) => params.has(name))
    .map((name) => `must not set \`${name}\`: chatferry sends one statement per query, so a source cannot be written through it`)
}
