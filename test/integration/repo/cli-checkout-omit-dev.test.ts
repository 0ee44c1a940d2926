/**
 * Issue 14, "a real package", the checkout half: a checkout whose TypeScript is bundled into
 * dist/ (`npm run build`) runs without its dev dependencies (`npm ci --omit=dev`), as the README
 * says. In a fresh directory with the package's manifest, lock file and bin/, dist/ is bundled
 * there (scripts/bundle-cli.ts), `npm ci --omit=dev` runs with the machine's own Node on PATH (not the
 * project's Node 24 dev dependency, which --omit=dev leaves out; the `prepare` script must not fail
 * on it), and `node bin/chatferry.js` then runs the compiled JavaScript. The tarball and the global
 * install are package-install.test.ts's.
 */
import { execFile } from 'node:child_process'
import { cpSync, existsSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, join, resolve } from 'node:path'
import { promisify } from 'node:util'

import { beforeAll, expect, it } from 'vitest'

const run = promisify(execFile)
const ROOT = resolve(import.meta.dirname, '../../..')
const MINUTES = 60_000
const dir = mkdtempSync(join(tmpdir(), 'chatferry-omit-dev-'))
/** PATH without the project's node_modules/.bin: `node` and `npm` are the machine's. */
const machinePath = (process.env.PATH ?? '')
  .split(delimiter)
  .filter((p) => !p.includes('node_modules'))
  .join(delimiter)
let install = { stdout: '', stderr: '' }

beforeAll(async () => {
  for (const f of ['package.json', 'package-lock.json', 'bin']) {
    cpSync(join(ROOT, f), join(dir, f), { recursive: true })
  }
  await run(process.execPath, [join(ROOT, 'scripts/bundle-cli.ts'), join(dir, 'dist')], { cwd: ROOT })
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: machinePath }
  delete env.NODE_OPTIONS
  install = await run('npm', ['ci', '--omit=dev', '--prefer-offline', '--no-audit', '--no-fund'], { cwd: dir, env })
}, 10 * MINUTES)

it(
  'npm ci --omit=dev installs production dependencies only, and bin/chatferry.js runs the bundled dist/',
  async () => {
    expect(install.stderr).not.toMatch(/ERR_|npm error/)
    // Production dependencies only: no TypeScript, no test runner, no Node 24 package.
    expect(existsSync(join(dir, 'node_modules/commander'))).toBe(true)
    for (const dev of ['typescript', 'vitest', 'node', 'playwright-core']) {
      expect(existsSync(join(dir, 'node_modules', dev)), dev).toBe(false)
    }
    expect(existsSync(join(dir, 'src')), 'no TypeScript sources to fall back on').toBe(false)
    const help = await run(process.execPath, [join(dir, 'bin/chatferry.js'), '--help'], { cwd: dir })
    expect(help.stdout).toMatch(/^Usage: chatferry/m)
    for (const command of ['demo', 'plan', 'run', 'load', 'worker', 'status', 'verify', 'completion']) {
      expect(help.stdout).toContain(command)
    }
    const version = await run(process.execPath, [join(dir, 'bin/chatferry.js'), '--version'], { cwd: dir })
    const pkg = (await import(join(ROOT, 'package.json'), { with: { type: 'json' } })) as { default: { version: string } }
    expect(version.stdout.trim()).toBe(pkg.default.version)
    // A command that loads most of the code: a configuration check of a file that does not exist.
    const check = await run(process.execPath, [join(dir, 'bin/chatferry.js'), 'config', 'check', '-c', 'nope.yaml'], { cwd: dir }).catch(
      (err: { code: number; stderr: string }) => err,
    )
    expect('code' in check ? check.code : 0).toBe(2)
    expect(check.stderr).toContain(`${join(dir, 'nope.yaml')}: 1 problem in the configuration`)
  },
  2 * MINUTES,
)
