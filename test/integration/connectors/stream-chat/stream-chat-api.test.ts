/**
 * The Stream Chat connector over the REST API, against the emulator on a real local HTTP server
 * (test/fixtures/stream-chat/emulator.ts): a storm of 429s and 503s read through to exactly the
 * expected rows; the per-endpoint pacing keeps under the emulator's window (no 429 at all); the
 * key and secret from the environment; expired credentials end `chatferry run` with exit 2 and a
 * clear message without the secret; a migration into the sandbox checked item by item against the
 * seed; and a run killed with SIGKILL while it reads and loads resumes to exactly the same contents.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { createConnector, SourceConfigSchema } from '../../../../connectors/index.ts'
import { ChatferryError } from '../../../../src/errors.ts'
import type { LegacyEntity } from '../../../../src/model/records.ts'
import { STREAM_TEST_KEY_ENV, STREAM_TEST_SECRET, STREAM_TEST_SECRET_ENV } from '../../../fixtures/stream-chat/api-contract-env.ts'
import { startStreamEmulator, type StreamEmulator } from '../../../fixtures/stream-chat/emulator.ts'
import { expectedStreamApi } from '../../../fixtures/stream-chat/expected.ts'
import { largeStreamSeed, streamSeed } from '../../../fixtures/stream-chat/seed.ts'
import { createTestDatabase } from '../../../helpers/db.ts'
import { runCli } from '../../../helpers/ledger-fixtures.ts'
import { dropWithin } from '../../../helpers/loader-harness.ts'
import { killAndResume, resumeRun } from '../../../helpers/resume-kills.ts'
import { compareWithExpected, expectMigration, sandboxContents, writeRunConfig } from '../../../helpers/run-e2e.ts'
import { checkRejects, rejectsOf } from '../../../helpers/run-rejects.ts'
import { useFileSandbox } from '../../../helpers/sandbox.ts'
import { testSecret } from '../../../helpers/secrets.ts'

const KEY = 'emukey'
process.env[STREAM_TEST_KEY_ENV] = KEY
process.env[STREAM_TEST_SECRET_ENV] = STREAM_TEST_SECRET

const apiConfig = (emu: StreamEmulator, extra: Record<string, unknown> = {}) => ({
  baseUrl: emu.url,
  keyEnv: STREAM_TEST_KEY_ENV,
  secretEnv: STREAM_TEST_SECRET_ENV,
  messagePageSize: 3,
  ...extra,
})

async function readIds(config: Record<string, unknown>) {
  const s = await createConnector(SourceConfigSchema.parse(config)).open()
  const out: Record<string, string[]> = {}
  try {
    for (const e of ['users', 'groups', 'members', 'messages'] as LegacyEntity[]) {
      out[e] = []
      for await (const p of s.read(e, { pageSize: 4 })) {
        out[e].push(...p.rows.map((r) => (r.ok ? JSON.stringify(r.record) : `${r.legacyId}:${r.field}`)))
      }
    }
  } finally {
    await s.close()
  }
  return out
}

function wanted() {
  const rows = expectedStreamApi(streamSeed())
  return Object.fromEntries(
    Object.entries(rows).map(([e, list]) => [
      e,
      (list as { ok: boolean; record?: unknown; legacyId?: string; field?: string }[])
        .map((r) => (r.ok ? JSON.stringify(r.record) : `${r.legacyId}:${r.field}`))
        .sort(),
    ]),
  )
}
const sorted = (o: Record<string, string[]>) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, [...v].sort()]))

describe('stream-chat API reader against the emulator', () => {
  let emu: StreamEmulator
  beforeAll(async () => {
    emu = await startStreamEmulator(streamSeed(), { apiKey: KEY, secret: STREAM_TEST_SECRET, limit: 5, windowMs: 1000, channelMemberLimit: 3 })
  })
  afterAll(() => emu.close())

  it('paced at the configured per-endpoint limits, a read never meets a 429, and yields every expected row', async () => {
    const limits = { queryUsers: 240, queryChannels: 240, getChannel: 240, getReplies: 240, queryMembers: 240 } // 4 a second, under the emulator's 5
    const before = emu.statuses.get(429) ?? 0
    const got = await readIds({ connector: 'stream-chat', api: apiConfig(emu, { limits }) })
    expect(sorted(got)).toEqual(wanted())
    expect(emu.statuses.get(429) ?? 0).toBe(before)
    expect(emu.served.get('queryMembers')).toBeGreaterThan(0) // #general's members page through Query Members
    expect(emu.served.get('getReplies')).toBeGreaterThan(0)
  }, 60_000)

  it('reads through a storm of 429s and 503s to exactly the expected rows', async () => {
    const limits = { queryUsers: 6000, queryChannels: 6000, getChannel: 6000, getReplies: 6000, queryMembers: 6000 }
    const before429 = emu.statuses.get(429) ?? 0
    const before503 = emu.statuses.get(503) ?? 0
    emu.storm(4)
    emu.failEvery(7)
    try {
      const got = await readIds({ connector: 'stream-chat', api: apiConfig(emu, { limits, maxRetries: 12 }) })
      expect(sorted(got)).toEqual(wanted())
    } finally {
      emu.failEvery(0)
    }
    // The storm, and the emulator's own 5-a-second window that the unpaced reader runs into.
    expect((emu.statuses.get(429) ?? 0) - before429).toBeGreaterThanOrEqual(4)
    expect((emu.statuses.get(503) ?? 0) - before503).toBeGreaterThan(0)
  }, 120_000)

  it('a missing key or secret in the environment is a configuration error naming the variables, before any request', async () => {
    const served = [...emu.served.values()].reduce((a, b) => a + b, 0)
    const c = createConnector(
      SourceConfigSchema.parse({ connector: 'stream-chat', api: apiConfig(emu, { keyEnv: 'CF_TEST_NOPE_KEY', secretEnv: 'CF_TEST_NOPE_SECRET' }) }),
    )
    const err = await c.open().then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(err).toBeInstanceOf(ChatferryError)
    expect((err as ChatferryError).code).toBe('CONFIG_INVALID')
    expect((err as Error).message).toContain('CF_TEST_NOPE_KEY and CF_TEST_NOPE_SECRET')
    expect([...emu.served.values()].reduce((a, b) => a + b, 0)).toBe(served)
  })

  it('a wrong secret is refused by Stream: SOURCE_INVALID with its code and message, never the secret', async () => {
    const wrong = testSecret('wrongstreamsecret')
    process.env.CF_TEST_WRONG_SECRET = wrong
    const c = createConnector(SourceConfigSchema.parse({ connector: 'stream-chat', api: apiConfig(emu, { secretEnv: 'CF_TEST_WRONG_SECRET' }) }))
    const err = await c.open().then(
      () => undefined,
      (e: unknown) => e,
    )
    expect((err as ChatferryError).code).toBe('SOURCE_INVALID')
    expect((err as Error).message).toMatch(/HTTP 401, Stream code 5: JWTAuth error: signature is not valid/)
    expect(`${(err as Error).message}${String((err as Error).stack)}`).not.toContain(wrong)
  })
})

const box = useFileSandbox()

describe('chatferry run over the Stream Chat API (emulator) → sandbox', () => {
  let emu: StreamEmulator
  beforeAll(async () => {
    emu = await startStreamEmulator(streamSeed(), { apiKey: KEY, secret: STREAM_TEST_SECRET, channelMemberLimit: 3 })
    box.cleanups.push(() => emu.close())
  })

  it('migrates item by item as the seed says, rejects the bad rows by id and field; expired credentials then end a run with exit 2', async () => {
    const app = await box.tsb.app({ retentionDays: 100_000, requestsPerMinute: 6000, windowMs: 10_000 })
    const state = await createTestDatabase('cf_stream_api_state')
    box.cleanups.push(() => dropWithin(state))
    const policies = { retention: { oldMessages: 'send' as const } }
    const cfg = writeRunConfig({
      appId: app.id,
      stateUrl: state.url,
      apiKey: app.apiKey,
      baseUrl: app.baseUrl,
      source: { connector: 'stream-chat', pageSize: 4, api: apiConfig(emu) },
      policies,
      load: { quotaWindowMs: 10_000 },
    })
    const started = Date.now()
    const res = await runCli(['run', '--config', cfg]).done
    expect(res.code, res.stderr.slice(-3000)).toBe(3)
    const expected = expectMigration(expectedStreamApi(streamSeed()), policies, started)
    expect(compareWithExpected(expected.items, await sandboxContents(box.tsb.sandbox, app.id))).toEqual([])
    checkRejects(expected, await rejectsOf(cfg))

    emu.expire()
    const expired = await runCli(['run', '--config', cfg, '--delta']).done
    expect(expired.code, expired.stderr.slice(-2000)).toBe(2)
    expect(expired.stderr).toMatch(/Stream code 40: JWTAuth error: token has expired/)
    expect(`${expired.stdout}${expired.stderr}`).not.toContain(STREAM_TEST_SECRET)
  }, 120_000)
})

it('a run over the API killed with SIGKILL while it plans and twice while it loads resumes to exactly the expected contents', async () => {
  const seed = largeStreamSeed(1200)
  const emu = await startStreamEmulator(seed, { apiKey: KEY, secret: STREAM_TEST_SECRET })
  box.cleanups.push(() => emu.close())
  const state = await createTestDatabase('cf_stream_api_state')
  box.cleanups.push(() => dropWithin(state))
  const policies = { retention: { oldMessages: 'send' as const } }
  const { app, cfg } = await resumeRun(box.tsb, {
    stateUrl: state.url,
    source: { connector: 'stream-chat', pageSize: 10, api: apiConfig(emu, { messagePageSize: 50 }) },
    policies,
  })
  const expected = expectMigration(expectedStreamApi(seed), policies, Date.now())
  expect(expected.items.messages.size).toBeGreaterThan(1200)
  await killAndResume(cfg, box.tsb, app.id, expected)
}, 300_000)
