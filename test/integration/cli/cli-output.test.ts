/**
 * What an operator sees (issue 14): `chatferry run` on a pseudo-terminal (util-linux `script`)
 * draws progress bars for planning and loading with the rate, the share of the quota and the ETA;
 * without a terminal the same progress comes as plain lines with no control characters; and
 * `--log-format json|pretty` (or $CHATFERRY_LOG_FORMAT) gives JSON lines or human lines, secrets
 * redacted in both.
 * Each job keeps its ledger on Postgres (the embedded store is not the subject here); runs whose
 * output two cases read are started once and shared.
 */
import { spawn } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { genericSourceConfig, loadGenericSqlFixture } from '../../fixtures/generic-sql/fixture.ts'
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts'
import { CLI, runCli } from '../../helpers/ledger-fixtures.ts'
import { writeRunConfig } from '../../helpers/run-e2e.ts'
import { startTestSandbox, type TestSandbox } from '../../helpers/sandbox.ts'
import { recordOutput } from '../../helpers/secrets.ts'

let tsb: TestSandbox
const ledgers: TestDatabase[] = []

beforeAll(async () => {
  tsb = await startTestSandbox()
})

afterAll(async () => {
  await tsb?.close()
  for (const db of ledgers) {
    await db.drop()
  }
})

/** Runs `fn` once, on first use, and hands every caller its result (a run two cases read). */
function once<T>(fn: () => Promise<T>): () => Promise<T> {
  let p: Promise<T> | undefined
  return () => (p ??= fn())
}

/** A fresh job: the generic-sql fixture on SQLite, a Postgres ledger, aimed at a new sandbox app with a small quota. */
async function freshConfig(): Promise<{ cfg: string; apiKey: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'chatferry-output-'))
  const url = `sqlite:${join(dir, 'legacy.db')}`
  await loadGenericSqlFixture('sqlite', url)
  const state = await createTestDatabase('cf_output_state')
  ledgers.push(state)
  const app = await tsb.app({ retentionDays: 100_000, requestsPerMinute: 6000, windowMs: 10_000 })
  const cfg = writeRunConfig({
    dir,
    appId: app.id,
    apiKey: app.apiKey,
    baseUrl: app.baseUrl,
    stateUrl: state.url,
    source: genericSourceConfig(url, 2) as unknown as Record<string, unknown>,
    policies: { retention: { oldMessages: 'send' } },
    load: { quotaWindowMs: 10_000 },
    // A few requests per second: the load lasts long enough for the bar to be redrawn.
    requestsPerMinute: 240,
    itemsPerRequest: 5,
  })
  return { cfg, apiKey: app.apiKey }
}

/** Runs the CLI under `script`, on a pseudo-terminal; returns what the terminal received. */
function onTerminal(args: readonly string[], env: Record<string, string> = {}): Promise<{ code: number | null; out: string }> {
  const quoted = [process.execPath, CLI, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ')
  const child = spawn('script', ['-qfec', quoted, '/dev/null'], {
    env: { ...process.env, CHATFERRY_LOG_LEVEL: 'info', COLUMNS: '160', LINES: '40', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  child.stdout.on('data', (d: Buffer) => (out += d.toString()))
  child.stderr.on('data', (d: Buffer) => (out += d.toString()))
  return new Promise((resolve) =>
    child.on('exit', (code) =>
      setTimeout(() => {
        recordOutput(`cli-tty-${args[0] ?? 'none'}`, out)
        resolve({ code, out })
      }, 20),
    ),
  )
}

// eslint-disable-next-line no-control-regex
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f]/

/** One run on an 80-column terminal: its bar lines and its log lines are two cases. */
const eightyColumns = once(async () => onTerminal(['run', '--config', (await freshConfig()).cfg], { COLUMNS: '80' }))

/** One run without a terminal, pretty logs from $CHATFERRY_LOG_FORMAT: its progress lines and its log lines are two cases. */
const withoutTerminal = once(async () => {
  const { cfg } = await freshConfig()
  return runCli(['run', '--config', cfg], { CHATFERRY_LOG_FORMAT: 'pretty', CHATFERRY_PROGRESS_SECONDS: '1' }).done
})

describe('progress', () => {
  it('on a terminal: bars for planning and loading, with the rate, the share of the quota and the ETA', async () => {
    const { cfg, apiKey } = await freshConfig()
    const res = await onTerminal(['run', '--config', cfg])
    expect(res.code, res.out.slice(-3000)).toBe(3)
    // Redrawn in place: cursor movement and line clearing, and the hidden cursor shown again.
    // eslint-disable-next-line no-control-regex
    expect(res.out).toMatch(/\x1b\[\d*[AGK]/)
    expect(res.out).toContain('\x1b[?25h')
    // eslint-disable-next-line no-control-regex
    const text = res.out.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '')
    expect(text).toMatch(/planning [█░·]{24} messages [\d,]+(\/[\d,]+)? rows/)
    expect(text).toMatch(/loading [█░]{24} messages [\d,]+\/[\d,]+ items +\d+\.\d% +[\d,]+ items\/min \(\d+% of quota\) +(ETA|done)/)
    expect(text).toMatch(/loading █{24} messages ([\d,]+)\/\1 items 100\.0%/)
    // Pretty logs on a terminal (the final line of the loader), no JSON.
    expect(text).toMatch(/(INFO|WARN).*finished; \d+ item\(s\) rejected/)
    expect(text).not.toMatch(/^\{"level"/m)
    expect(res.out).not.toContain(apiKey)
  })

  it('on an 80-column terminal: every bar line fits, with its ETA whole (issue 28)', async () => {
    const res = await eightyColumns()
    expect(res.code, res.out.slice(-3000)).toBe(3)
    // eslint-disable-next-line no-control-regex
    const text = res.out.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '')
    const bars = text.split(/\r?\n|\r/).filter((l) => /^loading .*messages/.test(l))
    expect(bars.length).toBeGreaterThan(0)
    for (const line of bars) {
      expect(line.length, line).toBeLessThanOrEqual(80)
      expect(line).toMatch(/ (ETA(@quota)? \S+( \S+)?|done)( {2}rejected [\d,]+)?$/)
    }
  })

  it('on an 80-column terminal: log lines printed above the bars are folded at spaces, never cut (issue 28)', async () => {
    const res = await eightyColumns()
    expect(res.code, res.out.slice(-3000)).toBe(3)
    // While the bars are drawn the terminal does not wrap (cli-progress turns auto-wrap off): a
    // line longer than the screen would lose its end. Every line written then fits in 80 columns.
    // eslint-disable-next-line no-control-regex
    const unwrapped = [...res.out.matchAll(/\x1b\[\?7l([\s\S]*?)(\x1b\[\?7h|$)/g)].map((m) => m[1] ?? '').join('\n')
    expect(unwrapped).not.toBe('')

    // Cursor moves and line clears start a new screen line; other codes (colours) take no room.
    const lines = unwrapped
      // eslint-disable-next-line no-control-regex
      .replace(/\x1b\[\d*[ABGK]/g, '\n')
      // eslint-disable-next-line no-control-regex
      .replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '')
      .split(/\r?\n|\r/)
    const logs = lines.filter((l) => /\] (INFO|WARN|ERROR)/.test(l))
    expect(logs.length).toBeGreaterThan(0)
    for (const line of lines) {
      expect(line.length, line).toBeLessThanOrEqual(80)
    }
    // Folded, not cut: the message of a long line is whole across its lines.
    expect(lines.join(' ').replace(/\s+/g, ' ')).toMatch(/planned users/)
  })

  it('without a terminal: plain progress lines, no control characters', async () => {
    const res = await withoutTerminal()
    expect(res.code, res.stderr.slice(-3000)).toBe(3)
    expect(res.stderr).toMatch(/^planning messages [\d,]+(\/[\d,]+)? rows/m)
    expect(res.stderr).toMatch(/^loading messages [\d,]+\/[\d,]+ items +\d+\.\d% +[\d,]+ items\/min \(\d+% of quota\) +(ETA|done)/m)
    for (const line of res.stderr.split('\n')) {
      expect(line, JSON.stringify(line)).not.toMatch(CONTROL)
    }
  })
})

describe('--log-format', () => {
  it('json: every stderr line is a JSON object (progress included); secrets redacted', async () => {
    const { cfg, apiKey } = await freshConfig()
    const res = await runCli(['run', '--config', cfg, '--log-format', 'json']).done
    expect(res.code, res.stderr.slice(-3000)).toBe(3)
    const lines = res.stderr.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('chatferry:'))
    expect(lines.length).toBeGreaterThan(2)
    const records = lines.map((l) => JSON.parse(l) as { level: number; msg: string; progress?: { phase: string } })
    expect(records.some((r) => r.progress?.phase === 'loading')).toBe(true)
    expect(records.some((r) => /finished; \d+ item\(s\) rejected/.test(r.msg))).toBe(true)
    expect(res.stderr).not.toContain(apiKey)
  })

  it('pretty (from $CHATFERRY_LOG_FORMAT): human lines, not JSON', async () => {
    const res = await withoutTerminal()
    expect(res.code, res.stderr.slice(-3000)).toBe(3)
    expect(res.stderr).toMatch(/^\[\d\d:\d\d:\d\d\] WARN: finished; \d+ item\(s\) rejected/m)
    expect(res.stderr).not.toMatch(/^\{/m)
  })

  it('a redacted secret stays redacted in both formats', async () => {
    for (const format of ['json', 'pretty'] as const) {
      const out: string[] = []
      const { createLogger } = await import('../../../src/logger.ts')
      const logger = createLogger({ format, destination: { write: (s: string) => void out.push(s) } as unknown as NodeJS.WritableStream })
      logger.info({ apiKey: 'cf-test-secret-log', target: { secret: 'cf-test-secret-nested' } }, 'configured')
      expect(out.join(''), format).toContain('[redacted]')
      expect(out.join(''), format).not.toContain('cf-test-secret-')
    }
  })

  it('rejects an unknown format with a usage error', async () => {
    const res = await runCli(['status', '--log-format', 'xml']).done
    expect(res.code).toBe(2)
    expect(res.stderr).toMatch(/--log-format.*xml|xml.*--log-format/)
  })
})

describe('a reader that goes away', () => {
  it('`chatferry --help | head -c 10`: exit 0 and no EPIPE stack trace', async () => {
    for (const args of [['--help'], ['run', '--help']]) {
      const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
      let stderr = ''
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
      // Read the first chunk, then close our end, as `head` does.
      child.stdout.once('data', () => child.stdout.destroy())
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
      expect(stderr, args.join(' ')).not.toMatch(/EPIPE|Unhandled/)
      expect(code, args.join(' ')).toBe(0)
    }
  })
})
