/**
 * The README's cutover sequence ("Cutover: from the bulk load to the new platform"), step by step as
 * an operator types it: CLI processes only — `chatferry sandbox` as the rehearsal platform (its own
 * process, its state in a directory so it can be stopped and started again), a generic-sql source on
 * SQLite, a Postgres ledger (the embedded store is not the subject here; each CLI process opening it
 * costs more CPU). Bulk `run`, the source changes, a scheduled `run --delta`, the final
 * delta refused while the bulk load has work, refused without `--delta`, warning (exit 4) while a
 * writer keeps changing the source during it, clean (exit 0) once the writer stopped, `runs` showing
 * which delta was final, and `verify` exit 0.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'

import { afterAll, expect, it } from 'vitest'
import { stringify } from 'yaml'

import { createTestDatabase } from '../../helpers/db.ts'
import { CLI, runCli } from '../../helpers/ledger-fixtures.ts'
import { dropWithin } from '../../helpers/loader-harness.ts'
import { testSecret } from '../../helpers/secrets.ts'

const children: ChildProcessWithoutNullStreams[] = []
afterAll(() => {
  for (const c of children) {
    if (c.exitCode === null && c.signalCode === null) {
      c.kill('SIGKILL')
    }
  }
})

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer()
    s.once('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number }
      s.close(() => resolve(port))
    })
  })
}

/** `chatferry sandbox --port P --dir D --app rehearsal:KEY` until its listening line; stop() sends SIGTERM and waits. */
async function startSandbox(port: number, dir: string, apiKey: string): Promise<{ stop(): Promise<void> }> {
  const child = spawn(
    process.execPath,
    [CLI, 'sandbox', '--port', String(port), '--dir', dir, '--app', `rehearsal:${apiKey}`, '--requests-per-minute', '600'],
    { env: { ...process.env, CHATFERRY_LOG_LEVEL: 'warn' } },
  )
  children.push(child)
  let out = ''
  child.stdout.on('data', (d: Buffer) => (out += d.toString()))
  child.stderr.on('data', (d: Buffer) => (out += d.toString()))
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()))
  const until = Date.now() + 30_000
  while (!out.includes('listening on')) {
    if (Date.now() > until || child.exitCode !== null) {
      throw new Error(`the sandbox did not start: ${out}`)
    }
    await new Promise((r) => setTimeout(r, 25))
  }
  return {
    async stop() {
      child.kill('SIGTERM')
      await exited
    },
  }
}

const DAY = 86_400_000

/** A small in-house schema whose every table records when a row last changed (epoch ms), in WAL mode so a writer can go on during a read. */
function createLegacy(file: string, now: number): DatabaseSync {
  const db = new DatabaseSync(file)
  db.exec('PRAGMA journal_mode = WAL')
  db.exec(`
    CREATE TABLE people (id TEXT PRIMARY KEY, name TEXT, changed INTEGER);
    CREATE TABLE rooms (id TEXT PRIMARY KEY, title TEXT, kind TEXT, changed INTEGER);
    CREATE TABLE room_people (room TEXT, person TEXT, role TEXT, changed INTEGER, PRIMARY KEY (room, person));
    CREATE TABLE lines (id INTEGER PRIMARY KEY, author TEXT, room TEXT, body TEXT, posted INTEGER, edited INTEGER, changed INTEGER, removed INTEGER);
    CREATE INDEX lines_posted ON lines (posted, id);
    CREATE INDEX lines_changed ON lines (changed);`)
  const t = now - 10 * DAY
  for (const [id, name] of [
    ['ada', 'Ada'],
    ['bob', 'Bob'],
    ['cy', 'Cy'],
  ]) {
    db.prepare('INSERT INTO people VALUES (?, ?, ?)').run(id ?? '', name ?? '', t)
  }
  db.prepare('INSERT INTO rooms VALUES (?, ?, ?, ?)').run('general', 'General', 'public', t)
  for (const p of ['ada', 'bob', 'cy']) {
    db.prepare('INSERT INTO room_people VALUES (?, ?, ?, ?)').run('general', p, p === 'ada' ? 'admin' : 'participant', t)
  }
  for (let i = 1; i <= 20; i++) {
    db.prepare('INSERT INTO lines VALUES (?, ?, ?, ?, ?, NULL, ?, NULL)').run(
      i,
      ['ada', 'bob', 'cy'][i % 3] ?? 'ada',
      'general',
      `line ${i}`,
      t + i * 60_000,
      t + i * 60_000,
    )
  }
  return db
}

function writeConfig(dir: string, port: number, legacy: string, stateUrl: string): string {
  const file = join(dir, 'chatferry.yaml')
  writeFileSync(
    file,
    stringify({
      target: {
        appId: 'rehearsal',
        region: 'us',
        apiKey: '${CHATFERRY_API_KEY}',
        baseUrl: `http://127.0.0.1:${port}/apps/rehearsal/v3`,
        quota: { requestsPerMinute: 600 },
      },
      state: { url: stateUrl },
      source: {
        connector: 'generic-sql',
        url: `sqlite:${legacy}`,
        entities: {
          users: { query: 'SELECT id, name, changed AS updated_at FROM people', timeFormat: 'epoch-ms' },
          groups: { query: 'SELECT id, title AS name, kind AS type, changed AS updated_at FROM rooms', timeFormat: 'epoch-ms' },
          members: {
            query: 'SELECT room AS group_id, person AS user_id, role AS scope, changed AS updated_at FROM room_people',
            timeFormat: 'epoch-ms',
          },
          messages: {
            query: `SELECT id, author AS sender_id, 'group' AS receiver_type, room AS receiver_id, body AS text,
                      posted AS sent_at, edited AS edited_at, removed AS deleted_at, changed AS updated_at FROM lines`,
            timeFormat: 'epoch-ms',
          },
        },
      },
      // An outage gives up quickly here, so the test can leave work in the ledger.
      load: { giveUpAfterMs: 3000 },
    }),
  )
  return file
}

interface VerifyReportShape {
  totals: { mismatches: number; unexplained: number }
  messages: { fields: string[]; sampleCompared: number }
  mismatches: Record<string, unknown>[]
}

interface Summary {
  status: string
  exitCode: number
  cutover?: {
    final: boolean
    readStartedAt: string
    changedAfterRead?: Record<string, number | null>
    changedRows?: number
    sourceStillChanging?: boolean
  }
}

it('rehearsal → bulk load → deltas → final delta refused, warning, clean → verify, as the README walks it', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'chatferry-cutover-'))
  const port = await freePort()
  const apiKey = testSecret('rehearsal')
  const env = { CHATFERRY_API_KEY: apiKey }
  const legacyFile = join(dir, 'legacy.db')
  const legacy = createLegacy(legacyFile, Date.now())
  const ledger = await createTestDatabase('cf_cutover')
  const cfg = writeConfig(dir, port, legacyFile, ledger.url)
  const cli = async (...args: string[]) => runCli([...args, '--config', cfg], env).done
  // The sandbox's own store holds the app's key, as a configuration file does: outside the
  // `chatferry-*` directories the secret scan reads.
  const sandboxDir = mkdtempSync(join(tmpdir(), 'cf-cutover-sandbox-'))
  let sandbox = await startSandbox(port, sandboxDir, apiKey)
  try {
    // --final belongs to --delta.
    const usage = await cli('run', '--final')
    expect(usage.code, usage.stderr).toBe(2)
    expect(usage.stderr).toContain('--final needs --delta')

    // Before the bulk load: refused, naming the command to run.
    const early = await cli('run', '--delta', '--final')
    expect(early.code, early.stderr).toBe(2)
    expect(early.stderr).toContain('the full read of users, groups, members, messages never completed: run `chatferry run`')

    // Bulk load.
    const bulk = await cli('run', '--json')
    expect(bulk.code, bulk.stderr.slice(-2000)).toBe(0)

    // The legacy system goes on: a new line, an edited and a deleted line, a renamed user, the
    // room made private, a member promoted.
    const t = Date.now()
    legacy.prepare('INSERT INTO lines VALUES (21, ?, ?, ?, ?, NULL, ?, NULL)').run('bob', 'general', 'line 21', t, t)
    legacy.prepare('UPDATE lines SET body = ?, edited = ?, changed = ? WHERE id = 5').run('line 5, edited', t, t)
    legacy.prepare('UPDATE people SET name = ?, changed = ? WHERE id = ?').run('Cy Young', t, 'cy')
    legacy.prepare('UPDATE lines SET removed = ?, changed = ? WHERE id = 7').run(t, t)
    legacy.prepare("UPDATE rooms SET kind = 'private', changed = ? WHERE id = 'general'").run(t)
    legacy.prepare("UPDATE room_people SET role = 'moderator', changed = ? WHERE person = 'bob'").run(t)

    // A scheduled delta during an outage of the platform: its items stay planned (exit 1).
    await sandbox.stop()
    const outage = await cli('run', '--delta')
    expect(outage.code, outage.stderr.slice(-2000)).toBe(1)
    const busy = await cli('run', '--delta', '--final')
    expect(busy.code, busy.stderr).toBe(2)
    expect(busy.stderr).toMatch(/the load still has work \(messages 1 (planned|sent)[^)]*\): run `chatferry load`/)

    // The platform is back: the next scheduled delta loads what was left.
    sandbox = await startSandbox(port, sandboxDir, apiKey)
    const delta = await cli('run', '--delta', '--json')
    expect(delta.code, delta.stderr.slice(-2000)).toBe(0)
    // The job's updates applied so far: all by this delta (the outage's never reached its update lane).
    const applied = Object.values((JSON.parse(delta.stdout) as { updates?: Record<string, { done: number }> }).updates ?? {}).reduce(
      (a, u) => a + u.done,
      0,
    )
    expect(applied).toBeGreaterThan(0)

    // The final delta while the legacy system is still written: exit 4, with counts.
    let next = 100
    const writer = setInterval(() => {
      const now = Date.now()
      legacy.prepare('INSERT INTO lines VALUES (?, ?, ?, ?, ?, NULL, ?, NULL)').run(next, 'ada', 'general', `late ${next}`, now, now)
      next++
    }, 50)
    let changing: Awaited<ReturnType<typeof cli>>
    try {
      changing = await cli('run', '--delta', '--final', '--json')
    } finally {
      clearInterval(writer)
    }
    expect(changing.code, changing.stderr.slice(-2000)).toBe(4)
    const warned = JSON.parse(changing.stdout) as Summary
    expect(warned.status).toBe('source-changing')
    expect(warned.cutover?.sourceStillChanging).toBe(true)
    expect(warned.cutover?.changedAfterRead?.messages).toBeGreaterThan(0)
    expect(warned.cutover?.changedAfterRead?.users).toBe(0)
    expect(changing.stderr).toMatch(/the source is still being written: \d+ messages? changed after the final read began at \d{4}-/)
    expect(changing.stderr).toContain('freeze the legacy system and run `chatferry run --delta --final` again')

    // Frozen: the final delta again, clean.
    const final = await cli('run', '--delta', '--final', '--json')
    expect(final.code, final.stderr.slice(-2000)).toBe(0)
    const clean = JSON.parse(final.stdout) as Summary
    expect(clean.cutover).toMatchObject({ final: true, changedRows: 0, sourceStillChanging: false })
    expect(Date.parse(clean.cutover?.readStartedAt ?? '')).toBeGreaterThan(Date.parse(warned.cutover?.readStartedAt ?? ''))

    // `runs` tells the final deltas apart and shows their cutover records.
    const runs = JSON.parse((await cli('runs', '--json')).stdout) as {
      mode: string
      status: string
      final: boolean
      cutover: Summary['cutover'] | null
      counts: Record<string, number>
    }[]
    // …and what each run's update lane did: the delta after the outage applied every update.
    const deltas = runs.filter((r) => r.mode === 'delta' && !r.final).reverse()
    expect(deltas.map((r) => [r.status, r.counts.updatesDone])).toEqual([
      ['failed', undefined],
      ['succeeded', applied],
    ])
    expect(deltas[1]?.counts.chatRequests).toBeGreaterThanOrEqual(applied)
    // (each `run` also writes its loader's `load` rows)
    const finals = runs.filter((r) => r.final)
    expect(finals.map((r) => [r.mode, r.cutover?.sourceStillChanging])).toEqual([
      ['delta', false],
      ['delta', true],
    ])
    expect(runs.filter((r) => !r.final).every((r) => r.cutover === null)).toBe(true)
    const text = (await cli('runs')).stdout
    expect(text).toMatch(/delta final\tsucceeded\t.*cutover at .* \(source frozen\)/)
    expect(text).toMatch(/SOURCE STILL CHANGING: \d+ rows changed after the read/)

    // Every change is on the platform, and verify compares each: the user's name, the group's type,
    // the member's scope, the edited text and editedAt, the deleted message's deletedAt.
    const verify = await cli('verify', '--out', join(dir, 'reports'))
    expect(verify.code, verify.stdout + verify.stderr.slice(-2000)).toBe(0)
    const report = JSON.parse(readFileSync(join(dir, 'reports', 'verify-report.json'), 'utf8')) as VerifyReportShape
    expect(report.totals, JSON.stringify(report.mismatches)).toEqual({ mismatches: 0, unexplained: 0 })
    expect(report.messages.fields).toEqual(['sender', 'receiver', 'sentAt', 'text', 'editedAt', 'deletedAt'])
    const platform = async (path: string) =>
      (
        (await (await fetch(`http://127.0.0.1:${port}/apps/rehearsal/v3${path}`, { headers: { apikey: apiKey } })).json()) as {
          data: Record<string, unknown>
        }
      ).data
    expect((await platform('/users/cy')).name).toBe('Cy Young')
    expect((await platform('/groups/general')).type).toBe('private')
    const lines = (legacy.prepare('SELECT count(*) AS n FROM lines').get() as { n: number }).n
    const status = JSON.parse((await cli('status', '--json')).stdout) as { entities: { entity: string; done: number }[] }
    expect(status.entities.find((e) => e.entity === 'messages')?.done).toBe(lines)
    expect(report.messages.sampleCompared).toBe(lines)

    // The platform drifts from the source (someone renames the user there): verify names it.
    const put = await fetch(`http://127.0.0.1:${port}/apps/rehearsal/v3/users/cy`, {
      method: 'PUT',
      headers: { apikey: apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Cy' }),
    })
    expect(put.status).toBe(200)
    const drift = await cli('verify', '--out', join(dir, 'reports'))
    expect(drift.code, drift.stdout + drift.stderr.slice(-2000)).toBe(3)
    const drifted = JSON.parse(readFileSync(join(dir, 'reports', 'verify-report.json'), 'utf8')) as VerifyReportShape
    expect(drifted.mismatches).toEqual([
      expect.objectContaining({
        entity: 'users',
        kind: 'field',
        targetKey: 'cy',
        legacyId: 'cy',
        field: 'name',
        expected: 'Cy Young',
        actual: 'Cy',
        explained: false,
      }),
    ])
  } finally {
    legacy.close()
    await sandbox.stop()
    await dropWithin(ledger)
  }
}, 300_000)
