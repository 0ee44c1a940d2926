/**
 * Issue 14, "shell completion": `chatferry completion bash|zsh` prints scripts generated from the
 * commands themselves. bash: the script is sourced and its function called as bash calls it. zsh:
 * an interactive zsh (`zsh -f -i` in a pseudo-terminal, zsh/zpty; test/fixtures/completion/zsh-tab.zsh)
 * loads compinit and the script, and Tab is pressed after each test line; what zsh's own matching passes to `compadd` (its `-O`
 * capture, so the words are those zsh would offer for the word typed so far) is compared with the
 * expected words. Without zsh (`apt-get install zsh`; .ci/run installs it) the zsh test is skipped,
 * with the reason.
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'

import { describe, expect, it } from 'vitest'

import { buildProgram } from '../../../src/cli/program.ts'
import { CLI } from '../../helpers/ledger-fixtures.ts'

/** Every command the program has (webhooks included), as `chatferry --help` lists them. */
const COMMANDS = buildProgram().commands.map((c) => c.name())

const haveZsh = spawnSync('zsh', ['--version'], { encoding: 'utf8' }).status === 0

/** The script of `chatferry completion <shell>`, in a file. */
function scriptFile(shell: 'bash' | 'zsh'): string {
  const script = spawnSync(process.execPath, [CLI, 'completion', shell], { encoding: 'utf8' })
  expect(script.status, script.stderr).toBe(0)
  const file = join(mkdtempSync(join(tmpdir(), 'cf-compl-')), `chatferry.${shell}`)
  writeFileSync(file, script.stdout)
  return file
}

/** Presses Tab in an interactive zsh after each line and prints what zsh offered (see the file). */
const ZSH_TAB = resolve(import.meta.dirname, '../../fixtures/completion/zsh-tab.zsh')

/** The words zsh offers after typing each line and pressing Tab, in the directory `cwd`. */
function zshCompletions(script: string, lines: readonly string[], cwd: string): string[][] {
  const r = spawnSync('zsh', ['-f', ZSH_TAB, script, ...lines], { cwd, encoding: 'utf8', timeout: 30_000, env: { ...process.env, TERM: 'dumb' } })
  expect(r.status, `zsh driver: ${r.stderr}\n${r.stdout.slice(-2000)}`).toBe(0)
  const cases = r.stdout.split(/@@case \d+@@/).slice(1)
  expect(cases).toHaveLength(lines.length)
  return cases.map((out) => [...out.matchAll(/<hits>([^<]*)<\/hits>/g)].flatMap((m) => (m[1] ?? '').split(' ').filter((w) => w !== '')))
}

describe('bash', () => {
  it('bash: sourcing the script registers chatferry; completing the first word lists the commands, then their options', () => {
    const file = scriptFile('bash')
    const probe = `
      source ${JSON.stringify(file)}
      complete -p chatferry
      t() { COMP_WORDS=("$@"); COMP_CWORD=$(( \${#COMP_WORDS[@]} - 1 )); COMPREPLY=(); _chatferry_completion; echo "\${COMPREPLY[*]}"; }
      t chatferry ''
      t chatferry re
      t chatferry load --
      t chatferry rejects --entity ''
      t chatferry apps ''
    `
    const r = spawnSync('bash', ['--norc', '--noprofile', '-c', probe], { encoding: 'utf8' })
    expect(r.status, r.stderr).toBe(0)
    const [registered, all, re, loadOptions, entities, apps] = r.stdout.split('\n')
    expect(registered).toBe('complete -F _chatferry_completion chatferry')
    expect(COMMANDS).toEqual(expect.arrayContaining(['plan', 'run', 'load', 'worker', 'status', 'rejects', 'completion']))
    for (const c of COMMANDS) {
      expect(all?.split(' '), all).toContain(c)
    }
    expect(re?.split(' ').sort()).toEqual(['rejects', 'retry-rejected'])
    expect(loadOptions?.split(' ')).toEqual(expect.arrayContaining(['--config', '--job', '--concurrency', '--lease-seconds', '--json', '--help']))
    expect(entities).toBe('users groups members messages')
    expect(apps).toBe('create list delete --help')

    expect(spawnSync(process.execPath, [CLI, 'completion', 'fish'], { encoding: 'utf8' }).status).toBe(2)
  })
})

describe.skipIf(!haveZsh)(`zsh${haveZsh ? '' : ' (skipped: zsh is not installed; apt-get install zsh)'}`, () => {
  it('an interactive zsh with compinit: Tab after chatferry offers the commands, then what each command takes', () => {
    const file = scriptFile('zsh')
    const cwd = mkdtempSync(join(tmpdir(), 'cf-compl-cwd-'))
    writeFileSync(join(cwd, 'chatferry.yaml'), '')
    writeFileSync(join(cwd, 'other.yaml'), '')
    const [all, re, loadOptions, entities, apps, shells, files] = zshCompletions(
      file,
      [
        'chatferry ',
        'chatferry re',
        'chatferry load --',
        'chatferry rejects --entity ',
        'chatferry apps ',
        'chatferry completion ',
        'chatferry run --config ',
      ],
      cwd,
    )
    expect(all).toEqual(expect.arrayContaining(COMMANDS))
    expect(all?.filter((w) => !w.startsWith('-')).sort()).toEqual([...COMMANDS].sort())
    // zsh's own matching keeps what starts with the typed word.
    expect(re?.sort()).toEqual(['rejects', 'retry-rejected'])
    expect(loadOptions).toEqual(expect.arrayContaining(['--config', '--job', '--concurrency', '--lease-seconds', '--json', '--help']))
    expect(loadOptions?.every((w) => w.startsWith('--'))).toBe(true)
    expect(entities?.sort()).toEqual(['groups', 'members', 'messages', 'users'])
    expect(apps?.filter((w) => !w.startsWith('-')).sort()).toEqual(['create', 'delete', 'list'])
    expect(shells?.filter((w) => !w.startsWith('-')).sort()).toEqual(['bash', 'zsh'])
    // A path option completes file names in the current directory.
    expect(files?.sort()).toEqual(['chatferry.yaml', 'other.yaml'])
  }, 90_000)

  it('the script starts with #compdef (it can live in $fpath) and parses in zsh; another shell is a usage error', () => {
    const file = scriptFile('zsh')
    const text = spawnSync(process.execPath, [CLI, 'completion', 'zsh'], { encoding: 'utf8' }).stdout
    expect(text).toMatch(/^#compdef chatferry\n/)
    const parsed = spawnSync('zsh', ['-n', file], { encoding: 'utf8' })
    expect(parsed.status, parsed.stderr).toBe(0)
    expect(spawnSync(process.execPath, [CLI, 'completion', 'fish'], { encoding: 'utf8' }).status).toBe(2)
  })
})
