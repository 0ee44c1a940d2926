/**
 * What chatferry checks in the text of every SQL statement it sends to a source, before sending it
 * (`snapshot-connection.ts`), and in each configured generic-sql query when the configuration is
 * read: the statement is one statement, stays inside the parentheses it is wrapped in, takes no row
 * locks and writes no file on the server. The text is lexed the way the engine lexes it (strings,
 * quoted names, comments, MySQL's executable `/*! … *\/` comments, Postgres dollar quotes and
 * nested comments); where a server setting changes the lexing (backslash escapes in strings:
 * MySQL's `NO_BACKSLASH_ESCAPES`, Postgres's `standard_conforming_strings`) the text is checked both
 * ways and a problem either way counts. Writes themselves are refused by the database (the session
 * is read-only); this check refuses what a read-only transaction still allows (MariaDB's
 * `LOCK IN SHARE MODE`, `INTO OUTFILE`) and names mistakes before any I/O. Pure.
 */
import type { SqlEngine } from './source-url.ts'

/** The engine's text with everything that is not code (strings, quoted names, comments) blanked. */
interface Lexed {
  readonly code: string
  /** What runs to the end of the text unclosed (`a string`, `a comment`…), if anything. */
  readonly unterminated?: string
}

const IDENT_CHAR = /[A-Za-z0-9_$\u0080-\uffff]/
const DOLLAR_TAG = /^\$(?:[A-Za-z_\u0080-\uffff][A-Za-z0-9_\u0080-\uffff]*)?\$/

/** Index just past the closing `quote` of a quoted run starting at `start` (the opening quote), or -1. */
function closeQuoted(sql: string, start: number, quote: string, backslashes: boolean): number {
  for (let i = start + 1; i < sql.length; i++) {
    const c = sql[i]
    if (backslashes && c === '\\') {
      i++
    } else if (c === quote) {
      if (sql[i + 1] !== quote) {
        return i + 1
      }
      i++
    }
  }
  return -1
}

/** Index just past the `*\/` closing the block comment at `start`; Postgres comments nest. */
function closeComment(sql: string, start: number, nested: boolean): number {
  let depth = 0
  for (let i = start; i < sql.length - 1; i++) {
    if (sql[i] === '/' && sql[i + 1] === '*') {
      depth = nested || depth === 0 ? depth + 1 : depth
      i++
    } else if (sql[i] === '*' && sql[i + 1] === '/') {
      depth--
      i++
      if (depth === 0) {
        return i + 1
      }
    }
  }
  return -1
}

/** True when `--` at `i` starts a comment: always on Postgres and SQLite, before white space on MySQL. */
function lineCommentAt(sql: string, i: number, engine: SqlEngine): boolean {
  if (sql[i] !== '-' || sql[i + 1] !== '-') {
    return engine === 'mysql' && sql[i] === '#'
  }
  const after = sql[i + 2]
  return engine !== 'mysql' || after === undefined || after <= ' ' || /\s/.test(after)
}

/**
 * Where the quoted run starting at `i` ends (just past it), with what it is, or `undefined` when
 * `i` starts no quoted run on this engine.
 */
function quotedRunAt(sql: string, i: number, engine: SqlEngine, backslashes: boolean): { end: number; what: string } | undefined {
  const c = sql[i] as string
  const prev = sql[i - 1] ?? ' '
  if (c === "'") {
    // Postgres E'…' strings always take backslash escapes.
    const eString = engine === 'postgres' && /[eE]/.test(prev) && !IDENT_CHAR.test(sql[i - 2] ?? ' ')
    const escapes = engine !== 'sqlite' && (backslashes || eString)
    return { end: closeQuoted(sql, i, "'", escapes), what: 'a string' }
  }
  if (c === '"') {
    return { end: closeQuoted(sql, i, '"', engine === 'mysql' && backslashes), what: 'a quoted name or string' }
  }
  if (c === '`' && engine !== 'postgres') {
    return { end: closeQuoted(sql, i, '`', false), what: 'a quoted name' }
  }
  if (c === '[' && engine === 'sqlite') {
    const close = sql.indexOf(']', i + 1)
    return { end: close < 0 ? -1 : close + 1, what: 'a quoted name' }
  }
  if (c === '$' && engine === 'postgres' && !IDENT_CHAR.test(prev)) {
    const tag = DOLLAR_TAG.exec(sql.slice(i))?.[0]
    if (tag !== undefined) {
      const close = sql.indexOf(tag, i + tag.length)
      return { end: close < 0 ? -1 : close + tag.length, what: 'a dollar-quoted string' }
    }
  }
  return undefined
}

/** The code of `sql` as `engine` lexes it, strings/names/comments blanked to spaces (same length). */
export function lexCode(sql: string, engine: SqlEngine, backslashes: boolean): Lexed {
  const out: string[] = []
  let inExecutable = false
  let i = 0
  const blank = (to: number) => {
    for (; i < to; i++) {
      out.push(sql[i] === '\n' ? '\n' : ' ')
    }
  }
  while (i < sql.length) {
    if (lineCommentAt(sql, i, engine)) {
      const nl = sql.indexOf('\n', i)
      blank(nl < 0 ? sql.length : nl)
      continue
    }
    if (sql[i] === '/' && sql[i + 1] === '*') {
      // MySQL runs the text of /*! … */ and MariaDB that of /*M! … */ (after an optional version).
      const executable = engine === 'mysql' ? /^\/\*M?!\d*/.exec(sql.slice(i))?.[0] : undefined
      if (executable !== undefined) {
        inExecutable = true
        blank(i + executable.length)
        continue
      }
      const end = closeComment(sql, i, engine === 'postgres')
      blank(end < 0 ? sql.length : end)
      if (end < 0) {
        return { code: out.join(''), unterminated: 'a comment' }
      }
      continue
    }
    if (inExecutable && sql[i] === '*' && sql[i + 1] === '/') {
      inExecutable = false
      blank(i + 2)
      continue
    }
    const run = quotedRunAt(sql, i, engine, backslashes)
    if (run !== undefined) {
      blank(run.end < 0 ? sql.length : run.end)
      if (run.end < 0) {
        return { code: out.join(''), unterminated: run.what }
      }
      continue
    }
    out.push(sql[i] as string)
    i++
  }
  return inExecutable ? { code: out.join(''), unterminated: 'an executable comment (/*! …)' } : { code: out.join('') }
}

/** A few characters of the original text from `at`, for a message. */
function excerpt(sql: string, at: number): string {
  const s = sql.slice(at, at + 40).replace(/\s+/g, ' ')
  return at + 40 < sql.length ? `${s}…` : s
}

const LOCKING = /\b(FOR\s+(?:NO\s+KEY\s+)?UPDATE|FOR\s+(?:KEY\s+)?SHARE|LOCK\s+IN\s+SHARE\s+MODE)\b/i
const FILE_WRITE = /\bINTO\s+(OUTFILE|DUMPFILE)\b/i

function problemsOfCode(sql: string, lexed: Lexed): string[] {
  const problems: string[] = []
  const { code } = lexed
  if (lexed.unterminated !== undefined) {
    problems.push(`has ${lexed.unterminated} that is never closed`)
  }
  const semicolon = code.indexOf(';')
  if (semicolon >= 0) {
    problems.push(`is more than one statement: it goes on after the \`;\` at character ${semicolon + 1} (\`${excerpt(sql, semicolon)}\`)`)
  }
  let depth = 0
  for (let i = 0; i < code.length && depth >= 0; i++) {
    depth += code[i] === '(' ? 1 : code[i] === ')' ? -1 : 0
    if (depth < 0) {
      problems.push(`closes a parenthesis it never opened, at character ${i + 1} (\`${excerpt(sql, i)}\`)`)
    }
  }
  if (depth > 0) {
    problems.push('leaves a parenthesis open')
  }
  const lock = LOCKING.exec(code)
  if (lock !== null) {
    problems.push(`takes row locks (\`${lock[1]?.replace(/\s+/g, ' ')}\`), which would block the legacy system's writers until the run ends`)
  }
  const file = FILE_WRITE.exec(code)
  if (file !== null) {
    problems.push(`writes a file on the database server (\`INTO ${file[1]}\`)`)
  }
  return problems
}

/**
 * What is wrong with `sql` as one read-only statement on `engine` (empty when nothing is): more
 * than one statement, unbalanced parentheses, a string or comment never closed, a locking read, a
 * file written on the server. Each message completes "the query …".
 */
export function statementProblems(sql: string, engine: SqlEngine): string[] {
  const problems = new Set<string>()
  for (const backslashes of engine === 'sqlite' ? [false] : [false, true]) {
    for (const p of problemsOfCode(sql, lexCode(sql, engine, backslashes))) {
      problems.add(p)
    }
  }
  return [...problems]
}
