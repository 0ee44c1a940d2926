/**
 * Dependencies point one way: down the folder table of the README ("Folders"). Every `import … from
 * '…'`, `export … from '…'` and `import('…')` (type imports included) in src/, connectors/ and
 * mappings/ is read with TypeScript's own import scanner (comments and strings are not imports),
 * resolved to a file, and checked against the table below. A violation names the file, the import
 * as written, and the folders on both sides. Inside connectors/, a connector's folder (a key of the
 * registry, `connectors/index.ts`) imports only its own folder and the shared ones
 * ({@link SHARED_CONNECTOR_FOLDERS}), and a shared folder only shared ones: adding a connector
 * touches its own folder and the registry.
 *
 * No two files import each other, directly or round a longer loop: the static imports and
 * re-exports (`import type` included; a dynamic `import()` does not count) of the same folders
 * form no cycle. A cycle is named by its files (a strongly connected component of the import graph).
 */
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'

import ts from 'typescript'
import { describe, expect, it } from 'vitest'

import { CONNECTOR_IDS } from '../../../connectors/index.ts'

const ROOT = resolve(import.meta.dirname, '../../..')
const SCANNED = ['src', 'connectors', 'mappings']

/** The shared utilities at the root of src/: anything in src/, connectors/ and mappings/ may use them; they use only each other. */
const SHARED = [
  'src/errors.ts',
  'src/lib.ts',
  'src/logger.ts',
  'src/db.ts',
  'src/db-template.ts',
  'src/version.ts',
  'src/zod-problems.ts',
  'src/did-you-mean.ts',
  'src/format-duration.ts',
  'src/terminal-output.ts',
  'src/paced-reading.ts',
]

/**
 * Each place (a folder, or the shared files), top to bottom, and what it may import besides
 * itself (a place, or one file of a place). The README's table says the same in words.
 */
/** What src/job may import: every place below it. */
const BELOW_JOB = [
  'src/report/',
  'src/plan/',
  'src/load/',
  'src/files/',
  'src/state/',
  'src/target/',
  'src/model/',
  'connectors/',
  'mappings/',
  'shared',
]

const ALLOWED: Record<string, readonly string[]> = {
  'src/cli/': ['src/fleet/', 'src/job/', ...BELOW_JOB, 'src/sandbox/', 'src/demo/'],
  'src/fleet/': ['src/job/', ...BELOW_JOB],
  'src/job/': BELOW_JOB,
  'src/report/': ['src/plan/', 'src/load/', 'src/files/', 'src/state/', 'src/target/', 'src/model/', 'connectors/', 'mappings/', 'shared'],
  'src/plan/': ['src/load/', 'src/files/', 'src/state/', 'src/target/', 'src/model/', 'connectors/', 'mappings/', 'shared'],
  'src/load/': ['src/files/', 'src/state/', 'src/target/', 'src/model/', 'shared'],
  'src/files/': ['src/state/', 'src/target/', 'src/model/', 'shared'],
  'src/state/': ['src/target/', 'src/model/', 'shared'],
  'src/target/': ['src/model/', 'shared'],
  'src/model/': [],
  'src/sandbox/': ['src/target/', 'shared'],
  'src/demo/': ['shared'],
  'connectors/': ['src/model/', 'shared'],
  'mappings/': [
    'src/model/',
    'src/target/schemas.ts',
    'src/target/message-import-check.ts',
    'src/target/member-import-check.ts',
    'src/target/characters.ts',
  ],
  shared: ['shared'],
}

/** The folders of connectors/ that are no connector: what the connectors share. */
const SHARED_CONNECTOR_FOLDERS = ['archive', 'cards', 'files', 'rows', 'sql']

/** `mattermost` for `connectors/mattermost/…`; undefined for a file outside a connectors/ folder (the registry). */
function connectorFolderOf(path: string): string | undefined {
  const parts = path.split('/')
  return parts[0] === 'connectors' && parts.length > 2 ? parts[1] : undefined
}

/** The imports from one connector's folder into another's, or from a shared folder into a connector's. */
function crossConnectorImports(edges: readonly Edge[]): string[] {
  const out: string[] = []
  for (const e of edges) {
    const from = connectorFolderOf(e.from)
    const to = connectorFolderOf(e.to)
    if (from === undefined || to === undefined || from === to || SHARED_CONNECTOR_FOLDERS.includes(to)) {
      continue
    }
    const who = SHARED_CONNECTOR_FOLDERS.includes(from) ? `the shared connectors/${from}/` : `connectors/${from}/`
    out.push(
      `${e.from}: import '${e.specifier}' goes from ${who} into connectors/${to}/, another connector's folder (only ${SHARED_CONNECTOR_FOLDERS.join(', ')} are shared)`,
    )
  }
  return out
}

/** The place of a repository-relative path, or undefined when the table has no row for it. */
function placeOf(path: string): string | undefined {
  if (SHARED.includes(path)) {
    return 'shared'
  }
  return Object.keys(ALLOWED)
    .filter((place) => place.endsWith('/') && path.startsWith(place))
    .sort((a, b) => b.length - a.length)[0]
}

interface Edge {
  /** The importing file, relative to the repository. */
  readonly from: string
  /** The import as written. */
  readonly specifier: string
  /** The imported file, relative to the repository. */
  readonly to: string
}

/** The edges that break the table, one line each. */
function violationsOf(edges: readonly Edge[]): string[] {
  const out: string[] = []
  for (const e of edges) {
    const from = placeOf(e.from)
    const to = placeOf(e.to)
    if (from === undefined) {
      out.push(`${e.from}: import '${e.specifier}' from a file in no row of the table`)
      continue
    }
    if (to === undefined) {
      out.push(`${e.from}: import '${e.specifier}' → ${e.to}, which is in no row of the table`)
      continue
    }
    if (from === to) {
      continue
    }
    const allowed = ALLOWED[from] ?? []
    if (allowed.includes(to) || allowed.some((a) => !a.endsWith('/') && a !== 'shared' && a === e.to)) {
      continue
    }
    out.push(`${e.from}: import '${e.specifier}' goes from ${from} to ${to === 'shared' ? e.to : to}`)
  }
  return out
}

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`
    if (entry.isDirectory()) {
      return sourceFiles(path)
    }
    return /\.(c|m)?ts$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : []
  })
}

/** Every relative import of the scanned folders. */
function importEdges(): Edge[] {
  return SCANNED.flatMap(sourceFiles).flatMap((from) => {
    const text = readFileSync(join(ROOT, from), 'utf8')
    return ts
      .preProcessFile(text, true, true)
      .importedFiles.map((f) => f.fileName)
      .filter((specifier) => specifier.startsWith('.'))
      .map((specifier) => ({
        from,
        specifier,
        to: relative(ROOT, resolve(ROOT, dirname(from), specifier))
          .split('\\')
          .join('/'),
      }))
  })
}

/** The static imports and re-exports of every scanned file (type-only ones included), by importing file. */
function staticImportGraph(): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>()
  for (const from of SCANNED.flatMap(sourceFiles)) {
    const source = ts.createSourceFile(from, readFileSync(join(ROOT, from), 'utf8'), ts.ScriptTarget.Latest)
    const to = new Set<string>()
    for (const statement of source.statements) {
      const specifier = (ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)) && statement.moduleSpecifier
      if (specifier && ts.isStringLiteral(specifier) && specifier.text.startsWith('.')) {
        to.add(
          relative(ROOT, resolve(ROOT, dirname(from), specifier.text))
            .split('\\')
            .join('/'),
        )
      }
    }
    graph.set(from, to)
  }
  return graph
}

/** The import cycles of a graph, one line each: its files (Tarjan's strongly connected components of more than one file). */
function importCycles(graph: ReadonlyMap<string, ReadonlySet<string>>): string[] {
  let next = 0
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const cycles: string[] = []
  const visit = (file: string) => {
    index.set(file, next)
    low.set(file, next++)
    stack.push(file)
    for (const to of graph.get(file) ?? []) {
      if (!index.has(to)) {
        visit(to)
        low.set(file, Math.min(low.get(file)!, low.get(to)!))
      } else if (stack.includes(to)) {
        low.set(file, Math.min(low.get(file)!, index.get(to)!))
      }
    }
    if (low.get(file) === index.get(file)) {
      const component = stack.splice(stack.indexOf(file))
      if (component.length === 2) {
        cycles.push(`${component.sort().join(' and ')} import each other`)
      } else if (component.length > 2) {
        cycles.push(`an import cycle through ${component.length} files: ${component.sort().join(', ')}`)
      }
    }
  }
  for (const file of graph.keys()) {
    if (!index.has(file)) {
      visit(file)
    }
  }
  return cycles.sort()
}

describe('import directions', () => {
  const edges = importEdges()

  it('reads the imports of every scanned folder', () => {
    expect(new Set(edges.map((e) => e.from.split('/')[0]))).toEqual(new Set(SCANNED))
  })

  it('every file is in a row of the table', () => {
    expect(SCANNED.flatMap(sourceFiles).filter((f) => placeOf(f) === undefined)).toEqual([])
  })

  it('every import goes down the table', () => {
    expect(violationsOf(edges)).toEqual([])
  })

  it('names an upward import, a file outside the table and an import into one', () => {
    expect(
      violationsOf([
        { from: 'src/load/loader.ts', specifier: '../cli/exit-codes.ts', to: 'src/cli/exit-codes.ts' },
        { from: 'src/config.ts', specifier: './errors.ts', to: 'src/errors.ts' },
        { from: 'src/sandbox/index.ts', specifier: '../config.ts', to: 'src/config.ts' },
        { from: 'mappings/ids.ts', specifier: '../src/target/client.ts', to: 'src/target/client.ts' },
        { from: 'mappings/ids.ts', specifier: '../src/target/schemas.ts', to: 'src/target/schemas.ts' },
        { from: 'src/logger.ts', specifier: './state/index.ts', to: 'src/state/index.ts' },
      ]),
    ).toEqual([
      "src/load/loader.ts: import '../cli/exit-codes.ts' goes from src/load/ to src/cli/",
      "src/config.ts: import './errors.ts' from a file in no row of the table",
      "src/sandbox/index.ts: import '../config.ts' → src/config.ts, which is in no row of the table",
      "mappings/ids.ts: import '../src/target/client.ts' goes from mappings/ to src/target/",
      "src/logger.ts: import './state/index.ts' goes from shared to src/state/",
    ])
  })

  it("no connector's folder imports another connector's folder", () => {
    expect(crossConnectorImports(edges)).toEqual([])
  })

  it('every folder of connectors/ is a connector of the registry or a shared folder', () => {
    const folders = readdirSync(join(ROOT, 'connectors'), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name)
    expect(folders.filter((f) => !(CONNECTOR_IDS as readonly string[]).includes(f) && !SHARED_CONNECTOR_FOLDERS.includes(f))).toEqual([])
    expect(CONNECTOR_IDS.filter((id) => !folders.includes(id))).toEqual([])
  })

  it("names an import into another connector's folder, from a connector or a shared folder", () => {
    expect(
      crossConnectorImports([
        { from: 'connectors/sendbird/export/files.ts', specifier: '../../slack-export/day-file.ts', to: 'connectors/slack-export/day-file.ts' },
        { from: 'connectors/sql/session.ts', specifier: '../mattermost/sql/queries.ts', to: 'connectors/mattermost/sql/queries.ts' },
        { from: 'connectors/zulip/index.ts', specifier: '../sql/session.ts', to: 'connectors/sql/session.ts' },
        { from: 'connectors/index.ts', specifier: './zulip/index.ts', to: 'connectors/zulip/index.ts' },
      ]),
    ).toEqual([
      "connectors/sendbird/export/files.ts: import '../../slack-export/day-file.ts' goes from connectors/sendbird/ into connectors/slack-export/, another connector's folder (only archive, cards, files, rows, sql are shared)",
      "connectors/sql/session.ts: import '../mattermost/sql/queries.ts' goes from the shared connectors/sql/ into connectors/mattermost/, another connector's folder (only archive, cards, files, rows, sql are shared)",
    ])
  })

  it('the table itself has no cycle', () => {
    const placeOfTarget = (a: string) => (a === 'shared' ? a : (placeOf(a) ?? a))
    const visiting = new Set<string>()
    const done = new Set<string>()
    const cycles: string[] = []
    const visit = (place: string, path: string[]) => {
      if (done.has(place)) {
        return
      }
      if (visiting.has(place)) {
        cycles.push([...path, place].join(' → '))
        return
      }
      visiting.add(place)
      for (const next of ALLOWED[place] ?? []) {
        if (placeOfTarget(next) !== place) {
          visit(placeOfTarget(next), [...path, place])
        }
      }
      visiting.delete(place)
      done.add(place)
    }
    for (const place of Object.keys(ALLOWED)) {
      visit(place, [])
    }
    expect(cycles).toEqual([])
  })

  // Reads and parses every source file: well under a second alone, more on a loaded machine.
  it('no two files import each other, directly or round a longer cycle', { timeout: 60_000 }, () => {
    expect(importCycles(staticImportGraph())).toEqual([])
  })

  it('names the files of each cycle, and a chain or a self-import as none', () => {
    const graph = new Map(
      Object.entries({
        'src/a.ts': ['src/b.ts', 'src/c.ts'],
        'src/b.ts': ['src/a.ts'],
        'src/c.ts': ['src/d.ts', 'src/c.ts'],
        'src/d.ts': ['src/e.ts'],
        'src/e.ts': ['src/f.ts', 'src/c.ts'],
        'src/f.ts': [],
      }).map(([from, to]) => [from, new Set(to)]),
    )
    expect(importCycles(graph)).toEqual(['an import cycle through 3 files: src/c.ts, src/d.ts, src/e.ts', 'src/a.ts and src/b.ts import each other'])
  })
})
