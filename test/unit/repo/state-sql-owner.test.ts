/**
 * The ledger has one owner (issue 11): every SQL operation on `chatferry.*` lives in
 * `src/state/sql/<verb>-<noun>.ts`, and only `src/state` imports those files; code elsewhere reaches
 * them through the interfaces `LedgerStore` carries. Imports are read with TypeScript's own import
 * scanner, as in `import-directions.test.ts`.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'

import ts from 'typescript'
import { describe, expect, it } from 'vitest'

const ROOT = resolve(import.meta.dirname, '../../..')
const SCANNED = ['src', 'connectors', 'mappings']
const SQL_DIR = 'src/state/sql/'

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`
    if (entry.isDirectory()) {
      return sourceFiles(path)
    }
    return /\.(c|m)?ts$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : []
  })
}

/** `from → to` of every relative import, repository-relative. */
function importEdges(): { from: string; to: string }[] {
  return SCANNED.flatMap(sourceFiles).flatMap((from) =>
    ts
      .preProcessFile(readFileSync(join(ROOT, from), 'utf8'), true, true)
      .importedFiles.map((f) => f.fileName)
      .filter((specifier) => specifier.startsWith('.'))
      .map((specifier) => ({
        from,
        to: relative(ROOT, resolve(ROOT, dirname(from), specifier))
          .split('\\')
          .join('/'),
      })),
  )
}

/** Imports of `src/state/sql/*` from outside `src/state`. */
function outsiders(edges: readonly { from: string; to: string }[]): string[] {
  return edges.filter((e) => e.to.startsWith(SQL_DIR) && !e.from.startsWith('src/state/')).map((e) => `${e.from} → ${e.to}`)
}

/** Imports of the test-only `src/state/inspect-ledger.ts` from production code outside `src/state`. */
function inspectors(edges: readonly { from: string; to: string }[]): string[] {
  return edges.filter((e) => e.to === 'src/state/inspect-ledger.ts' && !e.from.startsWith('src/state/')).map((e) => `${e.from} → ${e.to}`)
}

describe('src/state/sql has one owner', () => {
  it('the ledger does not hand out its database: only tests import inspect-ledger.ts', () => {
    expect(inspectors(importEdges())).toEqual([])
    expect(inspectors([{ from: 'src/load/loader.ts', to: 'src/state/inspect-ledger.ts' }])).toEqual([
      'src/load/loader.ts → src/state/inspect-ledger.ts',
    ])
  })

  it('only src/state imports src/state/sql', () => {
    const edges = importEdges()
    expect(edges.some((e) => e.to.startsWith(SQL_DIR))).toBe(true)
    expect(outsiders(edges)).toEqual([])
  })

  it('names an import of an SQL operation from outside src/state', () => {
    expect(
      outsiders([
        { from: 'src/report/verify.ts', to: 'src/state/sql/count-open-items.ts' },
        { from: 'src/state/verify-lookups.ts', to: 'src/state/sql/count-open-items.ts' },
        { from: 'src/report/verify.ts', to: 'src/state/index.ts' },
      ]),
    ).toEqual(['src/report/verify.ts → src/state/sql/count-open-items.ts'])
  })

  it('each operation file is kebab-case verb-noun and exports its one function by the camelCase name', () => {
    const bad: string[] = []
    for (const file of sourceFiles('src/state/sql')) {
      const base = file.slice(SQL_DIR.length).replace(/\.ts$/, '')
      const fn = base.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase())
      const text = readFileSync(join(ROOT, file), 'utf8')
      const functions = [...text.matchAll(/^export (?:async )?function (\w+)/gm)].map((m) => m[1])
      if (!/^[a-z]+(-[a-z]+)+$/.test(base) || functions.length !== 1 || functions[0] !== fn) {
        bad.push(`${file}: exports ${functions.join(', ') || 'no function'}`)
      }
    }
    expect(bad).toEqual([])
  })
})
