/**
 * Source database URLs: which engine a URL names, how to show it in messages (never with its
 * password), and how a failure to reach it becomes a `SOURCE_UNAVAILABLE` error.
 */
import { ChatferryError } from '../../src/errors.ts'
import { redactUrl } from '../../src/logger.ts'

/** The database engines the SQL connectors read. MariaDB counts as `mysql`. */
export const SQL_ENGINES = ['postgres', 'mysql', 'sqlite'] as const
export type SqlEngine = (typeof SQL_ENGINES)[number]

/** The URL forms accepted in `source.url`, for messages. */
export const SOURCE_URL_FORMS = 'postgres://…, postgresql://…, mysql://…, mariadb://… or sqlite:<path>'

/** The engine a source URL names, or `undefined` when the scheme is not one chatferry reads. */
export function engineOf(url: string): SqlEngine | undefined {
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1]?.toLowerCase()
  switch (scheme) {
    case 'postgres':
    case 'postgresql':
      return 'postgres'
    case 'mysql':
    case 'mariadb':
      return 'mysql'
    case 'sqlite':
      return 'sqlite'
    default:
      return undefined
  }
}

/**
 * The file path of a `sqlite:` URL: `sqlite:data/chat.db` and `sqlite://data/chat.db` are relative,
 * `sqlite:/srv/chat.db` and `sqlite:///srv/chat.db` absolute.
 */
export function sqlitePathOf(url: string): string {
  let rest = url.replace(/^sqlite:/i, '')
  if (rest.startsWith('//')) {
    rest = rest.slice(2)
  }
  return decodeURIComponent(rest)
}

/** The URL as it may appear in a message or a log line: password replaced by `***`. */
export function describeSource(url: string): string {
  if (engineOf(url) === 'sqlite') {
    return `sqlite:${sqlitePathOf(url)}`
  }
  return redactUrl(url)
}

/** The password in a URL, when it has one (so a driver message quoting it can be scrubbed). */
function passwordOf(url: string): string | undefined {
  try {
    const p = new URL(url).password
    return p === '' ? undefined : decodeURIComponent(p)
  } catch {
    return undefined
  }
}

/** Removes the URL's password (raw and URL-encoded) from a driver's message, just in case. */
export function scrubSecret(message: string, url: string): string {
  const password = passwordOf(url)
  if (password === undefined || password.length < 3) {
    return message
  }
  return message.split(password).join('***').split(encodeURIComponent(password)).join('***')
}

/**
 * The error chatferry stops with when the source cannot be reached or a query against it fails:
 * names the source (host, port, database; never the password) and keeps the driver's error as cause.
 */
export function sourceUnavailable(url: string, what: string, cause: unknown): ChatferryError {
  const detail = cause instanceof Error ? cause.message || String((cause as { code?: unknown }).code ?? cause) : String(cause)
  const code = isSourceInvalid(cause) ? 'SOURCE_INVALID' : 'SOURCE_UNAVAILABLE'
  return new ChatferryError(code, `${what} (${describeSource(url)}): ${scrubSecret(detail, url)}`, { cause })
}

/**
 * Whether a driver's error is one a rerun cannot fix (`SOURCE_INVALID`): the database refuses the
 * query or the login as written. Postgres: SQLSTATE class 42 (undefined table or column, syntax,
 * no privilege), 28 (authentication), 3D000 (no such database); MySQL/MariaDB: the same errors by
 * number; SQLite: no such table/column, a syntax error. Everything else (unreachable, timeouts,
 * a dropped connection, a division by zero in a row) stays `SOURCE_UNAVAILABLE`: rerun resumes.
 */
export function isSourceInvalid(cause: unknown): boolean {
  const err = cause as { code?: unknown; errno?: unknown; message?: unknown } | null
  if (err === null || typeof err !== 'object') {
    return false
  }
  const code = typeof err.code === 'string' ? err.code : ''
  if (/^(42[0-9A-Z]{3}|28[0-9A-Z]{3}|3D000)$/.test(code)) {
    return true
  }
  // ER_NO_SUCH_TABLE, ER_BAD_FIELD_ERROR, ER_PARSE_ERROR, ER_TABLEACCESS_DENIED, ER_ACCESS_DENIED, ER_DBACCESS_DENIED, ER_BAD_DB_ERROR
  if (typeof err.errno === 'number' && [1146, 1054, 1064, 1142, 1045, 1044, 1049].includes(err.errno)) {
    return true
  }
  return code === 'ERR_SQLITE_ERROR' && /no such (table|column)|syntax error/.test(String(err.message))
}
