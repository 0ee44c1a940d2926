/**
 * chatferry as an operator installs it: `npm pack` (which bundles dist/ in `prepack`), the tarball
 * installed globally into a temporary prefix, and the installed `chatferry` run through npm's own
 * bin shim on Node 22 and on Node 24 — `--help` and `--version` on both (every command's module
 * loaded), and on Node 22 the complete demo on a tenth of its sample (`--messages 3000`: every
 * stage, re-hosted files and verify included; demo-cli.test.ts runs the same bundle's demo on
 * Node 24). The container image's Dockerfile runs the same pack-and-install steps.
 *
 * Node 24 is the project's `node` dev dependency; Node 22 is the registry's `node@22` package,
 * installed once into `node_modules/.cache/chatferry-node22` and reused by later runs.
 *
 * It packs a copy of the files the Dockerfile copies (with the checkout's node_modules linked in),
 * as the image's build stage does, not the checkout itself: `prepack` writes dist/, and a dist/ in
 * the checkout would make bin/chatferry.js run that compiled copy instead of the sources — in the
 * other test files running at the same time (deploy-files.test.ts), half-written, and afterwards,
 * stale.
 */
import { execFile, spawn } from 'node:child_process'
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, dirname, join, resolve } from 'node:path'
import { promisify } from 'node:util'

import { beforeAll, describe, expect, it } from 'vitest'

import { V8_FLAGS } from '../../../bin/v8-flags.js'

const run = promisify(execFile)
const ROOT = resolve(import.meta.dirname, '../../..')
const NODE22_DIR = join(ROOT, 'node_modules/.cache/chatferry-node22')
const work = mkdtempSync(join(tmpdir(), 'chatferry-pkg-'))
const prefix = join(work, 'prefix')
const MINUTES = 60_000

/** The directory holding the `node` binary of a Node install from the registry's `node` package. */
async function node22Bin(): Promise<string> {
  const bin = join(NODE22_DIR, 'node_modules/node/bin')
  if (!existsSync(join(bin, 'node'))) {
    await run('npm', ['install', '--no-audit', '--no-fund', '--no-save', '--prefix', NODE22_DIR, 'node@22'], { cwd: ROOT })
  }
  return bin
}

/** The Node options the image sets (the Dockerfile's `ENV NODE_OPTIONS=…`): the installed CLI runs under them here too. */
const IMAGE_NODE_OPTIONS = /\bNODE_OPTIONS=(\S+)/.exec(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'))?.[1]

/** Runs the installed `chatferry` with `nodeBin` first on PATH, as a global install would be run, under the image's Node options. */
function installed(nodeBin: string, args: string[]) {
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: [nodeBin, join(prefix, 'bin'), process.env.PATH ?? ''].join(delimiter) }
  delete env.NODE_OPTIONS
  if (IMAGE_NODE_OPTIONS !== undefined) {
    env.NODE_OPTIONS = IMAGE_NODE_OPTIONS
  }
  return run(join(prefix, 'bin', 'chatferry'), args, { env, cwd: work, maxBuffer: 64 * 1024 * 1024 })
}

/**
 * Starts the installed `chatferry sandbox` without the image's Node options (an npm install as an
 * operator runs it, `NODE_OPTIONS` as given), reads the command line of the process it started
 * once it listens, and stops it with SIGTERM: what it ran under, and how it exited.
 */
async function installedSandboxCommandLine(nodeBin: string, nodeOptions: string | undefined): Promise<{ argv: string[]; exit: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: [nodeBin, join(prefix, 'bin'), process.env.PATH ?? ''].join(delimiter) }
  delete env.NODE_OPTIONS
  if (nodeOptions !== undefined) {
    env.NODE_OPTIONS = nodeOptions
  }
  const child = spawn(join(prefix, 'bin', 'chatferry'), ['sandbox', '--port', '0'], { env, cwd: work, stdio: ['ignore', 'pipe', 'pipe'] })
  // Its stderr read as it comes (an unread pipe can hold the process up) and kept for the failure message.
  let err = ''
  child.stderr.on('data', (d: Buffer) => (err += d.toString()))
  const exited = new Promise<string>((res) => child.on('exit', (code, signal) => res(`exit ${code ?? signal}: ${err}`)))
  let out = ''
  await new Promise<void>((res, rej) => {
    child.stdout.on('data', (d: Buffer) => ((out += d.toString()), out.includes('listening on') && res()))
    void exited.then((exit) => rej(new Error(`sandbox ended before listening (${exit}): ${out}`)))
  })
  // The process the test started (its pid), not a child of it: a signal meant for chatferry reaches it.
  const argv = readFileSync(`/proc/${child.pid}/cmdline`, 'utf8')
    .split('\0')
    .filter((a) => a !== '')
  child.kill('SIGTERM')
  return { argv, exit: await exited }
}

/** The Dockerfile's `COPY`s of its build stage. */
const PACKED_FROM = ['package.json', 'package-lock.json', 'tsconfig.json', 'scripts', 'bin', 'src', 'connectors', 'mappings']

beforeAll(async () => {
  const checkout = join(work, 'checkout')
  for (const f of PACKED_FROM) {
    cpSync(join(ROOT, f), join(checkout, f), { recursive: true })
  }
  symlinkSync(join(ROOT, 'node_modules'), join(checkout, 'node_modules'), 'dir')
  await run('npm', ['pack', '--pack-destination', work], { cwd: checkout, maxBuffer: 64 * 1024 * 1024 })
  const tarball = readdirSync(work).find((f) => /^chatferry-.*\.tgz$/.test(f))
  expect(tarball, 'npm pack wrote no tarball').toBeDefined()
  await run('npm', ['install', '-g', '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund', join(work, tarball as string)], { cwd: work })
}, 10 * MINUTES)

describe.each([
  ['Node 24', async () => dirname(process.execPath), /^v24\./, false],
  ['Node 22', node22Bin, /^v22\./, true],
])('the packed tarball installed globally, on %s', (_name, nodeBin, version, withDemo) => {
  let bin = ''
  beforeAll(async () => {
    bin = await nodeBin()
    const { stdout } = await run(join(bin, 'node'), ['--version'])
    expect(stdout.trim()).toMatch(version)
  }, 5 * MINUTES)

  it('runs compiled JavaScript: --help lists the commands, --version the package version', async () => {
    const help = await installed(bin, ['--help'])
    expect(help.stdout).toMatch(/^Usage: chatferry/m)
    for (const command of ['demo', 'plan', 'run', 'load', 'verify', 'status']) {
      expect(help.stdout).toContain(command)
    }
    expect(help.stderr).toBe('')
    const { stdout } = await installed(bin, ['--version'])
    const pkg = (await import(join(ROOT, 'package.json'), { with: { type: 'json' } })) as { default: { version: string } }
    expect(stdout.trim()).toBe(pkg.default.version)
    // No TypeScript source is shipped or loaded: the package holds dist/ only.
    expect(existsSync(join(prefix, 'lib/node_modules/chatferry/src'))).toBe(false)
  })

  it.runIf(process.platform === 'linux')(
    "runs under chatferry's V8 flags in the process it was started as, unless NODE_OPTIONS sets them",
    async () => {
      const plain = await installedSandboxCommandLine(bin, undefined)
      expect(plain.argv[0]).toMatch(/node$/)
      expect(plain.argv.slice(1, 1 + V8_FLAGS.length)).toEqual([...V8_FLAGS])
      expect(plain.argv.slice(-3)).toEqual(['sandbox', '--port', '0'])
      expect(plain.exit).toMatch(/^exit 0:/)
      // An operator's own value wins: no flag of the same name is added.
      const own = await installedSandboxCommandLine(bin, '--max-semi-space-size=8')
      expect(own.argv.some((a) => a.startsWith('--max-semi-space-size'))).toBe(false)
      expect(own.exit).toMatch(/^exit 0:/)
    },
    MINUTES,
  )

  // The demo once, on the other runtime: on Node 24 the sources run it in demo-cli.test.ts, and
  // --help above has loaded every module of the same compiled code.
  it.runIf(withDemo)(
    'runs the complete demo migration and verifies it',
    async () => {
      const dir = join(work, `demo-${version.source.replace(/\W/g, '')}`)
      const { stdout, stderr } = await installed(bin, ['demo', '--dir', dir, '--messages', '3000'])
      expect(stdout).toMatch(/^verified: the sandbox holds exactly the items the ledger says were loaded/m)
      expect(stdout).toContain(`try: chatferry status -c ${join(dir, 'chatferry.yaml')}`)
      expect(stderr).not.toMatch(/ExperimentalWarning|ERR_/)
    },
    5 * MINUTES,
  )
})
