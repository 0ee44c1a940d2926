/**
 * The Twilio Conversations connector against the emulator on a real local HTTP server
 * (test/fixtures/twilio-conversations/emulator.ts): a storm of 429s (Twilio 20429) and 503s read
 * through to exactly the expected rows; a media file opened through the connector's reader (Basic
 * auth to the Media Content Service, then its redirect); a migration into the sandbox checked
 * item by item against the seed; a rotated auth token ends `chatferry run` with exit 2 and
 * Twilio's code, never the token; SIGKILL while planning and loading, then resume.
 */
import { text } from 'node:stream/consumers'

import { beforeAll, describe, expect, it } from 'vitest'

import { createConnector, SourceConfigSchema } from '../../../../connectors/index.ts'
import type { LegacyEntity } from '../../../../src/model/records.ts'
import { TWILIO_SID, TWILIO_SID_ENV, TWILIO_TOKEN, TWILIO_TOKEN_ENV } from '../../../fixtures/twilio-conversations/contract-env.ts'
import { startTwilioEmulator, type TwilioEmulator } from '../../../fixtures/twilio-conversations/emulator.ts'
import { expectedTwilio } from '../../../fixtures/twilio-conversations/expected.ts'
import { largeTwilioSeed, media, SVC, twilioSeed } from '../../../fixtures/twilio-conversations/seed.ts'
import { createTestDatabase } from '../../../helpers/db.ts'
import { runCli } from '../../../helpers/ledger-fixtures.ts'
import { dropWithin } from '../../../helpers/loader-harness.ts'
import { killAndResume, resumeRun } from '../../../helpers/resume-kills.ts'
import { compareWithExpected, expectMigration, sandboxContents, writeRunConfig } from '../../../helpers/run-e2e.ts'
import { checkRejects, rejectsOf } from '../../../helpers/run-rejects.ts'
import { useFileSandbox } from '../../../helpers/sandbox.ts'

process.env[TWILIO_SID_ENV] = TWILIO_SID
process.env[TWILIO_TOKEN_ENV] = TWILIO_TOKEN

const source = (emu: TwilioEmulator, extra: Record<string, unknown> = {}) => ({
  connector: 'twilio-conversations',
  baseUrl: emu.url,
  mediaBaseUrl: emu.url,
  accountSidEnv: TWILIO_SID_ENV,
  authTokenEnv: TWILIO_TOKEN_ENV,
  apiPageSize: 3,
  requestsPerSecond: 100,
  ...extra,
})

const label = (r: { ok: boolean; record?: unknown; legacyId?: string; field?: string }) =>
  r.ok ? JSON.stringify(r.record) : `${r.legacyId}:${r.field}`

describe('twilio-conversations against the emulator', () => {
  let emu: TwilioEmulator
  beforeAll(async () => {
    emu = await startTwilioEmulator(twilioSeed(), { accountSid: TWILIO_SID, authToken: TWILIO_TOKEN })
    return () => emu.close()
  })

  it('reads through a storm of 429s and 503s to exactly the expected rows', async () => {
    emu.storm(5)
    emu.failEvery(6)
    const s = await createConnector(SourceConfigSchema.parse(source(emu, { maxRetries: 10 }))).open()
    const got: Record<string, string[]> = {}
    try {
      for (const e of ['users', 'groups', 'members', 'messages'] as LegacyEntity[]) {
        got[e] = []
        for await (const p of s.read(e)) {
          got[e].push(...p.rows.map(label))
        }
        got[e].sort()
      }
    } finally {
      emu.failEvery(0)
      await s.close()
    }
    const want = expectedTwilio(twilioSeed(), { mediaBaseUrl: emu.url, nonChat: 'users' })
    expect(got).toEqual(Object.fromEntries(Object.entries(want).map(([e, rows]) => [e, (rows as Parameters<typeof label>[0][]).map(label).sort()])))
    expect(emu.statuses.get(429)).toBeGreaterThanOrEqual(5)
    expect(emu.statuses.get(503)).toBeGreaterThan(0)
  }, 120_000)

  it('opens a media file with the account credentials and follows the redirect to its temporary URL', async () => {
    const reader = createConnector(SourceConfigSchema.parse(source(emu))).files?.()
    expect(reader).toBeDefined()
    const f = await reader?.open(`${emu.url}/v1/Services/${SVC}/Media/${media(1)}/Content`)
    expect(await text(f?.body as NodeJS.ReadableStream)).toBe(`media ${media(1)}`)
    await expect(reader?.open(`http://elsewhere.example/v1/Services/${SVC}/Media/${media(1)}/Content`)).rejects.toThrow(
      /not on the Media Content Service/,
    )
  })
})

const box = useFileSandbox()

it('chatferry run: migrates item by item as the seed says; a rotated auth token then ends a run with exit 2', async () => {
  const emu = await startTwilioEmulator(twilioSeed(), { accountSid: TWILIO_SID, authToken: TWILIO_TOKEN })
  box.cleanups.push(() => emu.close())
  const app = await box.tsb.app({ retentionDays: 100_000, requestsPerMinute: 6000, windowMs: 10_000 })
  const state = await createTestDatabase('cf_twilio_state')
  box.cleanups.push(() => dropWithin(state))
  const policies = { retention: { oldMessages: 'send' as const } }
  const cfg = writeRunConfig({
    appId: app.id,
    stateUrl: state.url,
    apiKey: app.apiKey,
    baseUrl: app.baseUrl,
    source: source(emu, { pageSize: 4 }),
    policies,
    load: { quotaWindowMs: 10_000 },
  })
  const started = Date.now()
  const res = await runCli(['run', '--config', cfg]).done
  expect(res.code, res.stderr.slice(-3000)).toBe(3)
  const expected = expectMigration(expectedTwilio(twilioSeed(), { mediaBaseUrl: emu.url, nonChat: 'users' }), policies, started)
  expect(compareWithExpected(expected.items, await sandboxContents(box.tsb.sandbox, app.id))).toEqual([])
  checkRejects(expected, await rejectsOf(cfg))
  // The connector's policy outcomes, counted from the seed: each SMS/WhatsApp address a user
  // (once), each such participant a member; the closed and the inactive conversation.
  const seed = twilioSeed()
  const nonChat = seed.conversations.flatMap((c) => c.participants).filter((p) => !p.identity && p.messaging_binding)
  const addresses = new Set(nonChat.map((p) => (p.messaging_binding as { address: string }).address))
  const states = seed.conversations.map((c) => c.conversation.state)
  expect(addresses.size).toBe(2)
  expect(res.stdout).toContain(`  nonChatParticipants: user-created ${addresses.size}, member-kept ${nonChat.length}\n`)
  expect(res.stdout).toContain(
    `  conversationState: closed-archived ${states.filter((x) => x === 'closed').length}, inactive-kept ${states.filter((x) => x === 'inactive').length}\n`,
  )

  emu.rotateToken()
  const refused = await runCli(['run', '--config', cfg, '--delta']).done
  expect(refused.code, refused.stderr.slice(-2000)).toBe(2)
  expect(refused.stderr).toMatch(/HTTP 401, Twilio error 20003: Authenticate/)
  expect(`${refused.stdout}${refused.stderr}`).not.toContain(TWILIO_TOKEN)
}, 120_000)

it('a run killed with SIGKILL while it plans and twice while it loads resumes to exactly the expected contents', async () => {
  const seed = largeTwilioSeed(1200)
  const emu = await startTwilioEmulator(seed, { accountSid: TWILIO_SID, authToken: TWILIO_TOKEN })
  box.cleanups.push(() => emu.close())
  const state = await createTestDatabase('cf_twilio_state')
  box.cleanups.push(() => dropWithin(state))
  const policies = { retention: { oldMessages: 'send' as const } }
  const { app, cfg } = await resumeRun(box.tsb, { stateUrl: state.url, source: source(emu, { apiPageSize: 50, pageSize: 10 }), policies })
  const expected = expectMigration(expectedTwilio(seed, { mediaBaseUrl: emu.url, nonChat: 'users' }), policies, Date.now())
  expect(expected.items.messages.size).toBeGreaterThan(1200)
  await killAndResume(cfg, box.tsb, app.id, expected)
}, 300_000)
