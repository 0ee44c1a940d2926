/**
 * End to end, as an operator runs it: the Sendbird fixture read from its Data Export files (JSON
 * ZIPs) and over the Platform API (the emulator, token from the environment) → `chatferry run` (a
 * process) → the sandbox, compared item by item with what the seed and the README's rules say
 * (test/fixtures/sendbird/expected-platform.ts, without the connector or `mapRecord`). A wrong token
 * exits 2 naming the application, never the token; `run --delta` over the API loads exactly a
 * message sent since; a run killed with SIGKILL in the middle of its
 * API read resumes from its cursor to exactly the same contents, nothing twice.
 */
import { beforeAll, describe, expect, it } from 'vitest'

import { startSendbirdEmulator } from '../../../fixtures/sendbird/emulator.ts'
import { expectedPlatform, type PlatformExpectation } from '../../../fixtures/sendbird/expected-platform.ts'
import { type SendbirdFixture, writeSendbirdExports } from '../../../fixtures/sendbird/generate.ts'
import { SB, SB_TOKEN, type SendbirdSeed, sendbirdSeed, T0 } from '../../../fixtures/sendbird/seed.ts'
import { createTestDatabase } from '../../../helpers/db.ts'
import { runCli } from '../../../helpers/ledger-fixtures.ts'
import { dropWithin } from '../../../helpers/loader-harness.ts'
import { type SandboxContents, sandboxContents, writeRunConfig } from '../../../helpers/run-e2e.ts'
import { useFileSandbox } from '../../../helpers/sandbox.ts'
import { testSecret } from '../../../helpers/secrets.ts'

const box = useFileSandbox()
const POLICIES = { retention: { oldMessages: 'send' as const } }

/** Every difference between the sandbox and the expectation, by key; duplicates too. */
function differences(want: PlatformExpectation, got: SandboxContents): string[] {
  const out: string[] = []
  const check = <T extends Record<string, unknown>>(
    entity: string,
    expected: Map<string, T>,
    rows: { key: string; row: Record<string, unknown> }[],
  ) => {
    const keys = rows.map((r) => r.key)
    if (new Set(keys).size !== keys.length) {
      out.push(`${entity}: a key twice`)
    }
    for (const k of keys.filter((x) => !expected.has(x))) {
      out.push(`${entity} ${k}: not expected`)
    }
    for (const [k, fields] of expected) {
      const row = rows.find((r) => r.key === k)?.row
      if (row === undefined) {
        out.push(`${entity} ${k}: missing`)
        continue
      }
      for (const [f, v] of Object.entries(fields)) {
        const actual = f === 'text' || f === 'url' ? JSON.stringify(row.data) : row[f]
        if (f === 'text' || f === 'url' ? !String(actual).includes(JSON.stringify(v).slice(1, -1)) : actual !== v) {
          out.push(`${entity} ${k}.${f}: ${JSON.stringify(actual)} ≠ ${JSON.stringify(v)}`)
        }
      }
    }
  }
  check('users', want.users, got.users)
  check('groups', want.groups, got.groups)
  check('members', new Map([...want.members].map(([k, scope]) => [k, { scope }])), got.members)
  check('messages', want.messages, got.messages)
  return out
}

async function runConfig(source: Record<string, unknown>) {
  const app = await box.tsb.app({ retentionDays: 100_000, requestsPerMinute: 6000, windowMs: 10_000 })
  const state = await createTestDatabase('cf_sendbird_state')
  box.cleanups.push(() => dropWithin(state))
  const cfg = writeRunConfig({
    appId: app.id,
    apiKey: app.apiKey,
    baseUrl: app.baseUrl,
    stateUrl: state.url,
    source,
    policies: POLICIES,
    load: { quotaWindowMs: 10_000 },
  })
  return { app, cfg }
}

/**
 * The connector's policy outcomes the plan summary prints, counted from the seed by the README's
 * rules (good records only: a bad one is a problem, with no outcome).
 */
function outcomeLines(seed: SendbirdSeed): string[] {
  const set = (v: unknown) => v !== undefined && v !== '' && !(Array.isArray(v) && v.length === 0)
  const users = seed.users.filter((u) => set(u.user_id) && typeof u.created_at === 'number')
  const groups = seed.channels.filter((c) => set(c.raw.channel_url) && c.raw.channel_url !== SB.dm).map((c) => c.raw)
  const messages = seed.messages
    .map((m) => m.raw)
    .filter((m) => set(m.message_id) && ['MESG', 'FILE', 'ADMM'].includes(String(m.type)) && typeof m.created_at === 'number')
    .filter((m) => m.type === 'ADMM' || m.user !== undefined)
  const n = <T>(xs: T[], f: (x: T) => unknown) => xs.filter(f).length
  const operators = seed.channels.filter((c) => !c.open && c.raw.channel_url !== SB.dm).flatMap((c) => c.members.filter((m) => m.role === 'operator'))
  const openOperators = seed.channels.filter((c) => c.open).flatMap((c) => c.raw.operators as unknown[])
  expect(operators.length * openOperators.length).toBeGreaterThan(0)
  return [
    `  adminMessages: system-message ${n(messages, (m) => m.type === 'ADMM')}\n`,
    `  customData: in-metadata ${n(groups, (g) => set(g.data)) + n(messages, (m) => set(m.data))}\n`,
    `  customType: in-metadata ${n(groups, (g) => set(g.custom_type)) + n(messages, (m) => set(m.custom_type))}\n`,
    `  metaArray: in-metadata ${n(messages, (m) => set(m.sorted_metaarray))}\n`,
    `  oneToOneChannels: direct-message ${n(messages, (m) => m.channel_url === SB.dm)}\n`,
    `  operators: admin ${operators.length}, admin-added ${openOperators.length}\n`,
    `  userMetadata: in-metadata ${n(users, (u) => Object.keys(u.metadata as object).length > 0)}\n`,
  ]
}

describe('chatferry run: Sendbird → sandbox', () => {
  let fx: SendbirdFixture
  const seed = sendbirdSeed()
  const want = expectedPlatform(seed)

  beforeAll(async () => {
    fx = await writeSendbirdExports(seed, 'json', 'zip')
    box.cleanups.push(() => fx.drop())
  })

  it('from the Data Export files: every user, group, member and message as the README says; bad rows rejected', async () => {
    const { app, cfg } = await runConfig({ connector: 'sendbird', pageSize: 3, export: fx.paths })
    const res = await runCli(['run', '--config', cfg]).done
    expect(res.code, res.stderr.slice(-3000)).toBe(3)
    expect(want.messages.size).toBeGreaterThan(12)
    expect(differences(want, await sandboxContents(box.tsb.sandbox, app.id))).toEqual([])
    const rejects = await runCli(['rejects', '--config', cfg]).done
    for (const id of ['frank', '1007', '1008', '1012']) {
      expect(rejects.stdout).toContain(id)
    }
    for (const line of outcomeLines(seed)) {
      expect(res.stdout).toContain(line)
    }
  }, 120_000)

  it('over the Platform API (token from the environment, never printed): the same contents', async () => {
    const emu = await startSendbirdEmulator(seed, { perSecond: 50 })
    box.cleanups.push(() => emu.close())
    const { app, cfg } = await runConfig({
      connector: 'sendbird',
      pageSize: 3,
      api: { appId: 'FIXTURE-APP', apiToken: '${SENDBIRD_API_TOKEN}', baseUrl: emu.baseUrl, requestsPerSecond: 50 },
    })
    const res = await runCli(['run', '--config', cfg], { SENDBIRD_API_TOKEN: SB_TOKEN }).done
    expect(res.code, res.stderr.slice(-3000)).toBe(3)
    expect(`${res.stdout}${res.stderr}`).not.toContain(SB_TOKEN)
    expect(differences(want, await sandboxContents(box.tsb.sandbox, app.id))).toEqual([])
    expect(emu.log.every((r) => r.method === 'GET')).toBe(true)
    expect(emu.log.filter((r) => r.status === 429)).toEqual([])

    // A message sent since: `run --delta` lists each channel's messages from the watermark on and
    // loads exactly that one.
    const before = await sandboxContents(box.tsb.sandbox, app.id)
    const sent = {
      message_id: 4242,
      type: 'MESG',
      channel_url: SB.dm,
      user: { user_id: SB.bob },
      message: 'back again',
      created_at: T0 + 3 * 86_400_000,
      updated_at: 0,
      mentioned_users: [],
    }
    seed.messages.push({ channel: SB.dm, raw: sent })
    try {
      const delta = await runCli(['run', '--config', cfg, '--delta'], { SENDBIRD_API_TOKEN: SB_TOKEN }).done
      expect(delta.code, delta.stderr.slice(-3000)).toBe(3)
      const after = await sandboxContents(box.tsb.sandbox, app.id)
      const fresh = after.messages.filter((m) => !before.messages.some((b) => b.key === m.key))
      expect(fresh.map((m) => [m.key, m.row.receiver_type, m.row.receiver])).toEqual([['4242', 'user', SB.alice]])
      expect(after.users.length + after.groups.length + after.members.length).toBe(before.users.length + before.groups.length + before.members.length)
    } finally {
      seed.messages.pop()
    }
  }, 120_000)

  it('a wrong or expired API token: exit 2, naming the application and the fix, never the token', async () => {
    const emu = await startSendbirdEmulator(seed)
    box.cleanups.push(() => emu.close())
    const { cfg } = await runConfig({ connector: 'sendbird', api: { appId: 'FIXTURE-APP', apiToken: '${SENDBIRD_API_TOKEN}', baseUrl: emu.baseUrl } })
    const wrong = testSecret('sendbird expired token')
    const res = await runCli(['run', '--config', cfg], { SENDBIRD_API_TOKEN: wrong }).done
    expect(res.code, res.stderr.slice(-3000)).toBe(2)
    expect(res.stderr).toMatch(/Sendbird application FIXTURE-APP .*refused the API token \(HTTP 401, code 400401/)
    expect(`${res.stdout}${res.stderr}`).not.toContain(wrong)
  }, 60_000)

  it('SIGKILL in the middle of the API read of messages, then run again: resumes from the cursor to exactly the expected contents', async () => {
    const emu = await startSendbirdEmulator(seed)
    box.cleanups.push(() => emu.close())
    const { app, cfg } = await runConfig({
      connector: 'sendbird',
      pageSize: 2,
      api: { appId: 'FIXTURE-APP', apiToken: '${SENDBIRD_API_TOKEN}', baseUrl: emu.baseUrl, requestsPerSecond: 100 },
    })
    const env = { SENDBIRD_API_TOKEN: SB_TOKEN }
    // Hold the read at the messages of the third channel (the one-to-one), after the pages before it.
    const held = emu.hold(/sendbird_group_channel_dm_ab\/messages$/)
    const first = runCli(['run', '--config', cfg], env)
    await held.reached
    const before = emu.log.length
    first.child.kill('SIGKILL')
    const k = await first.done
    expect(k.signal).toBe('SIGKILL')
    held.release()

    const last = await runCli(['run', '--config', cfg], env).done
    expect(last.code, last.stderr.slice(-3000)).toBe(3)
    expect(differences(want, await sandboxContents(box.tsb.sandbox, app.id))).toEqual([])
    // The second run did not read the users, channels and members again from the start.
    const second = emu.log.slice(before)
    expect(second.filter((r) => r.url.startsWith('/v3/group_channels/sendbird_group_channel_general/messages')).length).toBeLessThanOrEqual(1)
  }, 120_000)
})
