/**
 * The README and the chapters in docs/ stay true to the tree and to the CLI: every relative link
 * of every Markdown file resolves, anchors included (GitHub's heading slugs); every
 * `chatferry <command> [subcommand] --option` the README and docs/ show exists in the commander
 * program (src/cli/program.ts); the configuration reference names every key the schemas accept;
 * the connectors chapter has a row per connector with all its `source:` keys; the README's folder
 * table names every folder of src/; every test or source file docs/reliability.md names as the
 * proof of a guarantee exists; and the README stays a front door (at most 250 lines). The checkers
 * are shown failing on broken samples first, so none of these can pass by checking nothing.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'

import { describe, expect, it } from 'vitest'

import { SourceConfigSchema } from '../../../connectors/index.ts'
import { buildProgram } from '../../../src/cli/program.ts'
import { FleetFileSchema } from '../../../src/fleet/fleet-file.ts'
import { ConfigSchema } from '../../../src/job/config.ts'
import {
  anchorsOf,
  brokenLinks,
  commandMentions,
  commandProblems,
  configKeyPaths,
  documentedKeys,
  githubSlug,
  splitFences,
} from '../../helpers/markdown-docs.ts'

const ROOT = join(import.meta.dirname, '../../..')
const FRONT_AND_DOCS = ['README.md', ...readdirSync(join(ROOT, 'docs')).map((f) => `docs/${f}`)].filter((f) => f.endsWith('.md'))
const SKIPPED_DIRS = new Set(['node_modules', '.git', 'dist', 'test-artifacts', 'coverage', '.chatferry', 'chatferry-reports'])

/** Every Markdown file of the repository (the READMEs of the folders link into docs/ and the README too). */
function markdownFiles(dir = ''): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = dir === '' ? entry.name : `${dir}/${entry.name}`
    if (entry.isDirectory()) {
      return SKIPPED_DIRS.has(entry.name) || path === 'test/fixtures' ? [] : markdownFiles(path)
    }
    return entry.name.endsWith('.md') ? [path] : []
  })
}

const read = (file: string) => readFileSync(join(ROOT, file), 'utf8')

/** The names of the test files under a folder, wherever they sit. */
function testFilesUnder(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? testFilesUnder(`${dir}/${entry.name}`) : entry.name.endsWith('.test.ts') ? [entry.name] : [],
  )
}

describe('the checkers themselves', () => {
  it('GitHub slugs: punctuation and code marks dropped, spaces to hyphens', () => {
    expect(githubSlug('Changes made on the platform: the webhook receiver and `changes.conflicts`')).toBe(
      'changes-made-on-the-platform-the-webhook-receiver-and-changesconflicts',
    )
    expect(githubSlug('Fleets: one app per tenant, migrated in parallel')).toBe('fleets-one-app-per-tenant-migrated-in-parallel')
    expect(githubSlug('One team only (`team:`)')).toBe('one-team-only-team')
    expect([...anchorsOf('# A\n```sh\n# not a heading\n```\n## A\n<a id="here"></a>')]).toEqual(['a', 'a-1', 'here'])
  })

  it('finds a missing file and a missing anchor, and ignores links in code', () => {
    const dir = 'test/fixtures/docs-links'
    expect(brokenLinks(ROOT, `${dir}/broken.md`)).toEqual([
      `${dir}/broken.md:5: ./missing.md: no such file ${dir}/missing.md`,
      `${dir}/broken.md:6: #no-such-heading: ${dir}/broken.md has no heading with the anchor #no-such-heading`,
      `${dir}/broken.md:7: ../../../README.md#no-such-heading: README.md has no heading with the anchor #no-such-heading`,
    ])
  })

  it('names an unknown command, subcommand and option, and passes known ones', () => {
    const program = buildProgram()
    const md = [
      'Run `chatferry run --delta --final` then `npm run chatferry -- fleet run --delta`.',
      '`chatferry migrate --fast`, `chatferry fleet launch`, `chatferry load --delta` and `(chatferry verify --sample 5)`.',
      'Bare: `run --delta --final`, `fleet run --delta`, `verify --fast`; not commands: `state --x`, `--json`.',
      '```sh',
      '# chatferry explode: a comment',
      'CHATFERRY_X=1 chatferry webhooks receive --public-url https://x --port 1 | tee log',
      'chatferry status --job a && chatferry runs --nope',
      '```',
    ].join('\n')
    expect(commandMentions(md).flatMap((m) => commandProblems(program, m))).toEqual([
      'chatferry migrate: no such command',
      'chatferry fleet launch: no such subcommand (provision, deprovision, run, worker, status, plan, verify, dashboard)',
      'chatferry load: no option --delta',
      'chatferry verify: no option --fast',
      'chatferry runs: no option --nope',
    ])
  })

  it('reads full and shortened key paths from a reference table', () => {
    expect([...documentedKeys('| `management.url` / `.key` / `.secret` | x | `load.concurrency` |\n```\n`a.b`\n```')]).toEqual([
      'management.url',
      'management.key',
      'management.secret',
      'load.concurrency',
    ])
  })
})

describe('documentation links', () => {
  it.each(markdownFiles())('%s: every relative link and anchor resolves', (file) => {
    expect(brokenLinks(ROOT, file)).toEqual([])
  })
})

describe('the README and docs/ against the code', () => {
  it('the README is a front door: at most 250 lines', () => {
    expect(read('README.md').split('\n').length).toBeLessThanOrEqual(250)
  })

  it.each(FRONT_AND_DOCS)('%s: every `chatferry` command, subcommand and option it names exists', (file) => {
    const program = buildProgram()
    const problems = commandMentions(read(file)).flatMap((m) => commandProblems(program, m).map((p) => `${file}:${m.line}: ${p}`))
    expect(problems).toEqual([])
  })

  it('the README lists every top-level command, each pointing to --help', () => {
    const mentioned = new Set(commandMentions(read('README.md')).map((m) => m.words[0]))
    const missing = buildProgram()
      .commands.map((c) => c.name())
      .filter((name) => !mentioned.has(name))
    expect(missing).toEqual([])
  })

  it('docs/configuration.md names every configuration key the schemas accept', () => {
    const documented = documentedKeys(read('docs/configuration.md'))
    // `source:` keys are per connector: docs/connectors.md and each connector's README.
    const all = configKeyPaths(ConfigSchema).filter((k) => k.includes('.') && !k.startsWith('source.'))
    // The leaves: a section (`target.quota`) is documented by its keys.
    const keys = all.filter((k) => !all.some((other) => other.startsWith(`${k}.`)))
    expect(keys.length).toBeGreaterThan(100)
    expect(keys.filter((k) => !documented.has(k))).toEqual([])
  })

  it('docs/fleets.md names every key of the fleet file', () => {
    const documented = documentedKeys(read('docs/fleets.md'))
    const all = configKeyPaths(FleetFileSchema).map((k) => k.replace(/\.\[\]/g, '[]'))
    // Sources, webhooks and team lists are written as shapes in their row (`{template: <name>, tenantValue: <v>}`).
    const keys = all
      .filter((k) => !all.some((other) => other.startsWith(`${k}.`) || other.startsWith(`${k}[]`)))
      .filter((k) => !k.startsWith('sources.') && !/\.source\.|webhooks\[\]|\.team\./.test(k))
    expect(keys.length).toBeGreaterThan(20)
    expect(keys.filter((k) => !documented.has(k))).toEqual([])
  })

  it('docs/connectors.md has a row per connector linking its README and naming every top-level `source:` key it takes', () => {
    const rows = splitFences(read('docs/connectors.md')).prose.filter((l) => l.startsWith('| ['))
    const options = SourceConfigSchema.options
    expect(options.length).toBeGreaterThanOrEqual(6)
    const problems = options.flatMap((option) => {
      const id = String(option.shape.connector.value)
      const row = rows.find((r) => r.startsWith(`| [${id}](../connectors/${id}/README.md)`))
      if (row === undefined) {
        return [`${id}: no row starting | [${id}](../connectors/${id}/README.md)`]
      }
      return Object.keys(option.shape)
        .filter((key) => key !== 'connector' && !row.includes(`\`${key}\``))
        .map((key) => `${id}: the row does not name \`${key}\``)
    })
    expect(problems).toEqual([])
  })

  it("the README's folder table names every folder of src/ and every shared file", () => {
    const table = read('README.md')
      .split('\n')
      .filter((l) => l.startsWith('| '))
      .join('\n')
    const folders = readdirSync(join(ROOT, 'src')).filter((f) => statSync(join(ROOT, 'src', f)).isDirectory())
    const shared = readdirSync(join(ROOT, 'src')).filter((f) => f.endsWith('.ts'))
    const missing = [
      ...folders.filter((f) => !table.includes(`| \`src/${f}/\``)).map((f) => `src/${f}/`),
      ...['connectors/', 'mappings/', 'test/', 'docs/'].filter((f) => !table.includes(`| \`${f}\``)),
      ...shared.filter((f) => !table.includes(`\`${f}\``) && !table.includes(`\`src/${f}\``)).map((f) => `src/${f}`),
    ]
    expect(missing).toEqual([])
  })

  it.each(FRONT_AND_DOCS)('%s: every source, test or deploy file it names exists', (file) => {
    const text = read(file)
    const paths = [...text.matchAll(/`((?:test|src|connectors|mappings|deploy|bin)\/[^`\s*…<>{}]+\.(?:ts|js|yaml|json|md))`/g)].map(
      (m) => m[1] as string,
    )
    const testFiles = new Set(testFilesUnder('test'))
    const tests = [...text.matchAll(/`([\w-]+\.test\.ts)`/g)].map((m) => m[1] as string)
    expect([...paths.filter((f) => !existsSync(join(ROOT, f))), ...tests.filter((t) => !testFiles.has(t))]).toEqual([])
  })

  it('docs/reliability.md: every file named as a proof exists', () => {
    const text = read('docs/reliability.md')
    const named = [...text.matchAll(/`((?:test|src|connectors)\/[^`\s]+\.ts)`/g)].map((m) => m[1] as string)
    expect(named.length).toBeGreaterThan(20)
    expect(named.filter((f) => !existsSync(join(ROOT, f))).map((f) => relative(ROOT, join(ROOT, f)))).toEqual([])
  })
})
