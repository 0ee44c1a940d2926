/**
 * Issue 24 on the Mattermost fixture (Postgres source and ledger, the CLI as a process, the sandbox
 * over HTTP): posts that become visible after a delta read past their `updateat`.
 * - A post whose `updateat` is 10 minutes below the posts' watermark (a long transaction committing
 *   late) arrives with the next `run --delta` (the default one-hour lookback), and the posts that
 *   delta read again unchanged cost no request.
 * - A post 2 days below it (a client syncing offline edits) is beyond the lookback: a delta does
 *   not read it, `verify` counts it as never planned and names `run --delta --reconcile-keys`,
 *   which brings it in, and `verify` is clean after.
 * Arrival and "nothing else sent" are read from the sandbox's request log.
 */
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import pg from 'pg'
import { afterAll, beforeAll, expect, it } from 'vitest'

import { VerifyReport } from '../../../src/report/schema.ts'
import { type MattermostSeed, MINUTE, MM, openFixtureWriter, type Row, T0 } from '../../fixtures/mattermost/load.ts'
import type { TestDatabase } from '../../helpers/db.ts'
import { lastRequestId, ledgerKeys, receivedSince } from '../../helpers/delta-e2e.ts'
import { runCli } from '../../helpers/ledger-fixtures.ts'
import { type MattermostDeltaWorld, startMattermostDeltaWorld } from '../../helpers/mattermost-delta-world.ts'
import type { TestApp, TestSandbox } from '../../helpers/sandbox.ts'

let world: MattermostDeltaWorld | undefined
let tsb: TestSandbox
let source: TestDatabase
let state: TestDatabase
let app: TestApp
let seed: MattermostSeed
let cfg: string

beforeAll(async () => {
  world = await startMattermostDeltaWorld('cf_lmm')
  ;({ tsb, source, state, app, seed, cfg } = world)
})

afterAll(async () => {
  await world?.close()
})

/** The posts' watermark (epoch ms) the ledger saved. */
async function postsWatermark(): Promise<number> {
  const c = new pg.Client({ connectionString: state.url })
  await c.connect()
  try {
    const r = await c.query<{ w: number }>(`select watermark::text::bigint as w from chatferry.cursors where entity = 'messages'`)
    return Number(r.rows[0]?.w)
  } finally {
    await c.end()
  }
}

async function verify(): Promise<{ code: number | null; report: VerifyReport; output: string }> {
  const out = mkdtempSync(join(tmpdir(), 'cf-late-mm-verify-'))
  const r = await runCli(['verify', '--config', cfg, '--out', out, '--sample', '1000'], { CHATFERRY_LOG_LEVEL: 'error' }).done
  return { code: r.code, output: r.stdout, report: VerifyReport.parse(JSON.parse(readFileSync(join(out, 'verify-report.json'), 'utf8'))) }
}

/** What a command sent (imports, chat writes) from the sandbox's request log; the fixture's bad rows make it exit 3. */
async function sentBy(args: readonly string[]): Promise<{ imports: string[]; writes: string[]; output: string }> {
  const before = await lastRequestId(tsb.sandbox, app.id)
  const r = await runCli([...args, '--config', cfg]).done
  expect(r.code, r.stderr.slice(-3000)).toBe(3)
  return { ...(await receivedSince(tsb.sandbox, app.id, before)), output: r.stdout }
}

it('a post committed late below the watermark arrives with the next delta; one synced days late with the command verify advises', async () => {
  const bulk = await runCli(['run', '--config', cfg]).done
  expect(bulk.code, bulk.stderr.slice(-3000)).toBe(3)
  const jobId = app.id.toLowerCase()
  const watermark = await postsWatermark()
  expect(watermark).toBeGreaterThan(T0)
  const template = seed.posts?.find((p) => p.id === 'p03tie') as Row
  const w = await openFixtureWriter('postgres', source.url)
  try {
    await w.insert('posts', [
      { ...template, id: 'p40late', createat: T0 + 50 * MINUTE, updateat: watermark - 10 * MINUTE, userid: MM.alice, message: 'Committed late' },
    ])
  } finally {
    await w.close()
  }
  const first = await sentBy(['run', '--delta'])
  const messages = await ledgerKeys(state.url, jobId, 'messages')
  expect(first.imports).toEqual([`messages ${messages.get('p40late')?.key}`])
  expect(first.writes).toEqual([])
  // The lookback read other posts again: unchanged, none sent.
  const unchanged = Number(/messages\s+\d+ rows → 1 new, 0 updated, (\d+) unchanged/.exec(first.output)?.[1] ?? 0)
  expect(unchanged).toBeGreaterThan(0)
  expect((await verify()).code).toBe(0)

  const w2 = await openFixtureWriter('postgres', source.url)
  try {
    await w2.insert('posts', [
      { ...template, id: 'p41offline', createat: T0 + 51 * MINUTE, updateat: watermark - 2 * 86_400_000, userid: MM.bob, message: 'Synced offline' },
    ])
  } finally {
    await w2.close()
  }
  expect((await sentBy(['run', '--delta'])).imports).toEqual([])
  const { code, report } = await verify()
  expect(code).not.toBe(0)
  const counted = report.mismatches.filter((m) => m.kind === 'source-count')
  expect(counted.map((m) => ({ entity: m.entity, missing: Number(m.expected) - Number(m.actual) }))).toEqual([{ entity: 'messages', missing: 1 }])
  const advised = /run `chatferry ([^`]+)`/.exec(counted[0]?.note ?? '')?.[1]
  expect(advised).toBe('run --delta --reconcile-keys')

  const reconciled = await sentBy((advised ?? '').split(' '))
  const after = await ledgerKeys(state.url, jobId, 'messages')
  expect(reconciled.imports).toEqual([`messages ${after.get('p41offline')?.key}`])
  expect(reconciled.writes).toEqual([])
  // Each entity's keys were reconciled; only that post was never planned.
  expect([...reconciled.output.matchAll(/keys reconciled: (\d+) rows?/g)].map((m) => Number(m[1]))).toEqual([0, 0, 0, 1])
  const clean = await verify()
  expect(clean.report.mismatches, clean.output).toEqual([])
  expect(clean.code).toBe(0)
}, 240_000)
