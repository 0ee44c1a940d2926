/**
 * The text check every source statement passes before it is sent (`connectors/sql/statement-check.ts`)
 * and the source URL settings refused (`read-only.ts`): each engine's lexing (strings, quoted
 * names, comments, executable comments, dollar quotes), both readings of backslashes where a server
 * setting decides, and the problems: more than one statement, a parenthesis closing the wrapper,
 * a locking read, a file written on the server.
 */
import { describe, expect, it } from 'vitest'

import { GenericSqlConfigSchema, queryTextProblems, stripQuery } from '../../../connectors/generic-sql/config.ts'
import { urlReadOnlyProblems } from '../../../connectors/sql/read-only.ts'
import { sourceUrl } from '../../../connectors/sql/source-config.ts'
import type { SqlEngine } from '../../../connectors/sql/source-url.ts'
import { lexCode, statementProblems } from '../../../connectors/sql/statement-check.ts'

const ENGINES: SqlEngine[] = ['postgres', 'mysql', 'sqlite']

describe('statementProblems: what every engine refuses', () => {
  const breakouts: [string, RegExp][] = [
    ['SELECT id FROM t; DELETE FROM canary', /more than one statement: it goes on after the `;` at character 17 \(`; DELETE FROM canary`\)/],
    ['SELECT 1 AS id) AS x; COMMIT; DELETE FROM canary; SELECT * FROM (SELECT 1', /more than one statement/],
    ['SELECT 1 AS id) AS x; COMMIT; DELETE FROM canary; SELECT * FROM (SELECT 1', /closes a parenthesis it never opened, at character 15/],
    ['SELECT id FROM canary FOR UPDATE', /takes row locks \(`FOR UPDATE`\)/],
    ['SELECT id FROM canary FOR  NO KEY\nUPDATE SKIP LOCKED', /takes row locks \(`FOR NO KEY UPDATE`\)/],
    ['SELECT id FROM canary for share', /takes row locks \(`for share`\)/],
    ['SELECT id FROM canary LOCK IN SHARE MODE', /takes row locks \(`LOCK IN SHARE MODE`\)/],
    ['SELECT id FROM canary FOR/* x */UPDATE', /takes row locks/],
    ["SELECT id FROM canary INTO OUTFILE '/tmp/x'", /writes a file on the database server \(`INTO OUTFILE`\)/],
    ['SELECT (id FROM canary', /leaves a parenthesis open/],
    ["SELECT 'abc FROM canary", /has a string that is never closed/],
    ['SELECT id FROM canary /* open', /has a comment that is never closed/],
  ]
  for (const engine of ENGINES) {
    for (const [sql, problem] of breakouts) {
      it(`${engine}: ${sql.replaceAll('\n', ' ')}`, () => {
        expect(statementProblems(sql, engine).join('\n')).toMatch(problem)
      })
    }
  }

  const fine = [
    'SELECT id, name FROM people',
    "SELECT id, 'a;b' AS x, 'it''s (' AS y FROM t WHERE z = ';' -- a ; comment (\n",
    'SELECT id /* ; FOR UPDATE ( */ FROM t',
    'SELECT "weird;name(" AS id FROM t',
    'SELECT id, updated_at AS for_update FROM t',
    "SELECT id FROM t WHERE note LIKE '%FOR UPDATE%'",
    'WITH x AS (SELECT 1 AS id) SELECT * FROM x',
  ]
  for (const engine of ENGINES) {
    for (const sql of fine) {
      it(`${engine} accepts: ${sql.replaceAll('\n', ' ')}`, () => {
        expect(statementProblems(sql, engine)).toEqual([])
      })
    }
  }
})

describe('statementProblems: each engine lexed as it lexes', () => {
  it('MySQL runs the text of /*! … */ and /*M! … */ comments: a lock or a `;` there counts', () => {
    expect(statementProblems('SELECT id FROM t /*!50000 FOR UPDATE */', 'mysql').join()).toMatch(/takes row locks/)
    expect(statementProblems('SELECT id FROM t /*M! LOCK IN SHARE MODE */', 'mysql').join()).toMatch(/takes row locks/)
    expect(statementProblems('SELECT id FROM t /*!; DELETE FROM canary */', 'mysql').join()).toMatch(/more than one statement/)
    // Elsewhere it is a comment.
    expect(statementProblems('SELECT id FROM t /*! FOR UPDATE */', 'sqlite')).toEqual([])
  })

  it('MySQL: `#` starts a comment, `--` only before white space', () => {
    expect(statementProblems('SELECT id FROM t # ; FOR UPDATE\n', 'mysql')).toEqual([])
    expect(statementProblems('SELECT 1--1 AS id FROM t; DELETE FROM canary', 'mysql').join()).toMatch(/more than one statement/)
    expect(statementProblems('SELECT id FROM t -- ; FOR UPDATE\n', 'mysql')).toEqual([])
  })

  it('MySQL: a backslash-escaped quote is read both ways (NO_BACKSLASH_ESCAPES or not)', () => {
    // With backslash escapes the string is `a'` and `; DELETE` is code; without, `' AS id; … -- '` is a string.
    const escaped = "SELECT 'a\\'' AS id; DELETE FROM canary -- '"
    expect(lexCode(escaped, 'mysql', false).code).not.toContain(';')
    expect(statementProblems(escaped, 'mysql').join()).toMatch(/more than one statement/)
    // The other way round: without escapes `'a\'` ends and `; DELETE` is code.
    const plain = "SELECT 'a\\' AS id; DELETE FROM canary -- '"
    expect(lexCode(plain, 'mysql', true).code).not.toContain(';')
    expect(statementProblems(plain, 'mysql').join()).toMatch(/more than one statement/)
  })

  it('Postgres: dollar quotes, nested comments, E-strings', () => {
    expect(statementProblems('SELECT $q$ ; FOR UPDATE ( $q$ AS id, $$;$$ AS x FROM t WHERE a = $1', 'postgres')).toEqual([])
    expect(statementProblems('SELECT id /* a /* nested ; */ still ( comment */ FROM t', 'postgres')).toEqual([])
    expect(statementProblems("SELECT E'it\\'s ;' AS id FROM t", 'postgres')).toEqual([])
    // standard_conforming_strings off: a backslash escapes in any string, so this `;` may be code.
    expect(statementProblems("SELECT 'a\\' AS id; DELETE FROM canary -- '", 'postgres').join()).toMatch(/more than one statement/)
    // A dollar inside a name is no quote.
    expect(statementProblems('SELECT a$b$ AS id FROM t; DELETE FROM canary', 'postgres').join()).toMatch(/more than one statement/)
  })

  it('SQLite: [names] and `names` are quoted', () => {
    expect(statementProblems('SELECT [a;b(] AS id, `c;d)` AS x FROM t', 'sqlite')).toEqual([])
  })

  it('lexCode keeps the length and blanks only what is not code', () => {
    const sql = "SELECT 'x;' AS id -- c\nFROM t"
    const { code } = lexCode(sql, 'postgres', false)
    expect(code).toHaveLength(sql.length)
    expect(code).toBe('SELECT      AS id     \nFROM t')
  })
})

describe('generic-sql configuration: query text refused before any I/O', () => {
  it('every entity whose query is refused is listed, at its path', () => {
    const r = GenericSqlConfigSchema.safeParse({
      connector: 'generic-sql',
      url: 'mysql://reader@db/chat',
      entities: {
        users: { query: 'SELECT id, name FROM people;' },
        groups: { query: 'SELECT id, name FROM rooms; DELETE FROM rooms' },
        members: { query: 'SELECT group_id, user_id FROM room_people LOCK IN SHARE MODE' },
        messages: { query: 'SELECT 1 AS id) AS x INTO OUTFILE "/tmp/x" -- ' },
      },
    })
    expect(r.success).toBe(false)
    const issues = (r.error?.issues ?? []).map((i) => `${i.path.join('.')}: ${i.message}`)
    expect(issues).toEqual([
      expect.stringMatching(/^entities\.groups\.query: refused: chatferry reads the source read-only, and the query is more than one statement/),
      expect.stringMatching(/^entities\.members\.query: refused: .* takes row locks \(`LOCK IN SHARE MODE`\)/),
      expect.stringMatching(/^entities\.messages\.query: refused: .* closes a parenthesis it never opened/),
      expect.stringMatching(/^entities\.messages\.query: refused: .* writes a file on the database server/),
    ])
  })

  it('a trailing `;` is no second statement', () => {
    expect(queryTextProblems('sqlite:x.db', { users: { query: 'SELECT id, name FROM people ;; ' } })).toEqual([])
    expect(queryTextProblems('sqlite:x.db', { users: { query: 'SELECT id, name FROM people;\n ;' } })).toEqual([])
    expect(stripQuery('SELECT 1 ; ;\n')).toBe('SELECT 1')
  })
})

describe('source URLs that would allow several statements per query', () => {
  it('mysql/mariadb URLs must not set multipleStatements or flags', () => {
    expect(urlReadOnlyProblems('mysql://u@h/db?multipleStatements=true&flags=MULTI_STATEMENTS')).toEqual([
      expect.stringMatching(/must not set `multipleStatements`/),
      expect.stringMatching(/must not set `flags`/),
    ])
    expect(urlReadOnlyProblems('mariadb://u@h/db?charset=utf8mb4')).toEqual([])
    expect(urlReadOnlyProblems('postgres://u@h/db?options=x')).toEqual([])
    expect(sourceUrl.safeParse('mariadb://u@h/db?multipleStatements=true').success).toBe(false)
  })
})
