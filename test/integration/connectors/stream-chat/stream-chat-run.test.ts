/**
 * End to end, as an operator runs it: the Stream Chat fixture export (v1 JSON, and v2
 * line-separated gzip) → `chatferry run` (a process) → the sandbox. The sandbox's contents are
 * compared item by item with what the seed and the policies say (expected canonical records from
 * test/fixtures/stream-chat/expected.ts → the documented rules, test/helpers/expected-items.ts,
 * without the connector, mappings, ledger or loader); every bad row is in `chatferry rejects` with its id and field; a second run
 * sends nothing; a run killed with SIGKILL while it plans and twice while it loads resumes to
 * exactly the same contents.
 */
import { beforeAll, describe, expect, it } from 'vitest'

import { BUILT_IN_CHANNEL_TYPES } from '../../../../connectors/stream-chat/config.ts'
import type { PoliciesInput } from '../../../../mappings/index.ts'
import type { ExpectedRows } from '../../../fixtures/expected-row.ts'
import { expectedStream } from '../../../fixtures/stream-chat/expected.ts'
import { type StreamFixture, type StreamFormat, writeStreamFixture } from '../../../fixtures/stream-chat/generate.ts'
import { DM_AB, largeStreamSeed } from '../../../fixtures/stream-chat/seed.ts'
import { createTestDatabase } from '../../../helpers/db.ts'
import { runCli } from '../../../helpers/ledger-fixtures.ts'
import { dropWithin } from '../../../helpers/loader-harness.ts'
import { killAndResume, resumeRun } from '../../../helpers/resume-kills.ts'
import { compareWithExpected, expectMigration, sandboxContents, writeRunConfig } from '../../../helpers/run-e2e.ts'
import { checkRejects, rejectsOf } from '../../../helpers/run-rejects.ts'
import { useFileSandbox } from '../../../helpers/sandbox.ts'

const box = useFileSandbox()

/**
 * The connector's policy outcomes the plan summary prints, counted from the fixture's expected
 * records (the README's rules applied to the seed, without the connector); a problem has none.
 */
function outcomeLines(rows: ExpectedRows): string[] {
  const good = (e: keyof ExpectedRows) =>
    rows[e].flatMap((r) =>
      r.ok ? [r.record as unknown as { metadata?: Record<string, unknown>; archivedAt?: number; receiverType?: string; type?: string }] : [],
    )
  const [users, groups, messages] = [good('users'), good('groups'), good('messages')]
  const n = <T>(xs: T[], f: (x: T) => unknown) => xs.filter(f).length
  const custom = (r: { metadata?: Record<string, unknown> }) => r.metadata?.custom !== undefined
  const customTypes = groups.filter((g) => !(String(g.metadata?.streamType) in BUILT_IN_CHANNEL_TYPES) && g.metadata?.groupDm !== true)
  const lines = [
    `  customFields: in-metadata ${n(users, custom) + n(groups, custom) + n(messages, custom)}\n`,
    `  deletedChannels: archived ${n(groups, (g) => g.archivedAt !== undefined)}\n`,
    `  pinned: in-metadata ${n(messages, (m) => m.metadata?.pinned !== undefined)}\n`,
    `  attachments: in-metadata ${n(messages, (m) => m.metadata?.streamAttachments !== undefined)}\n`,
    `  customChannelTypes: ${[...new Set(customTypes.map((g) => g.type))].map((t) => `${t} ${n(customTypes, (g) => g.type === t)}`).join(', ')}\n`,
    `  distinctChannels: group-dm ${n(groups, (g) => g.metadata?.groupDm === true)}, direct-message ${n(messages, (m) => m.receiverType === 'user')}\n`,
  ]
  expect(lines.filter((l) => / 0\b/.test(l) || l.endsWith(': \n'))).toEqual([])
  return lines
}

const CASES: { format: StreamFormat; gzip: boolean; policies: PoliciesInput }[] = [
  { format: 'json', gzip: false, policies: { retention: { oldMessages: 'send' } } },
  {
    format: 'jsonl',
    gzip: true,
    policies: { retention: { oldMessages: 'send' }, deletes: { mode: 'tombstone' }, systemMessages: { mode: 'as-user' } },
  },
]

describe.each(CASES)('chatferry run: the Stream Chat fixture as $format (gzip: $gzip) → sandbox', (c) => {
  let fx: StreamFixture
  let cfg: string
  let appId: string

  beforeAll(async () => {
    fx = writeStreamFixture(c.format, { gzip: c.gzip })
    box.cleanups.push(() => fx.drop())
    const app = await box.tsb.app({ retentionDays: 100_000, requestsPerMinute: 6000, windowMs: 10_000 })
    const state = await createTestDatabase('cf_stream_state')
    box.cleanups.push(() => dropWithin(state))
    appId = app.id
    cfg = writeRunConfig({
      appId: app.id,
      stateUrl: state.url,
      apiKey: app.apiKey,
      baseUrl: app.baseUrl,
      // Small pages: threads, channels and the one-to-one conversation cross page boundaries.
      source: { connector: 'stream-chat', path: fx.path, pageSize: 4, maxElementBytes: fx.seed.maxElementBytes },
      policies: c.policies,
      load: { quotaWindowMs: 10_000 },
    })
  })

  it('migrates every user, group, member and message item by item; every bad row is rejected with its id and field', async () => {
    const started = Date.now()
    const res = await runCli(['run', '--config', cfg]).done
    expect(res.code, res.stderr.slice(-3000)).toBe(3)
    // The signed CDN URLs' signatures are the customer's; they are not echoed to the terminal.
    expect(`${res.stdout}${res.stderr}`).not.toContain('Signature=')

    const expected = expectMigration(expectedStream(fx), c.policies, started)
    expect(expected.items.messages.size).toBeGreaterThan(15)
    expect(expected.rejects.size).toBeGreaterThanOrEqual(10)
    const actual = await sandboxContents(box.tsb.sandbox, appId)
    expect(compareWithExpected(expected.items, actual)).toEqual([])
    checkRejects(expected, await rejectsOf(cfg))
    for (const line of outcomeLines(expectedStream(fx))) {
      expect(res.stdout).toContain(line)
    }

    // Spot checks straight from the seed, not through the mapping.
    const byLegacy = (e: 'users' | 'groups' | 'messages', id: string) => {
      const key = [...expected.legacyOfKey].find(([k, v]) => k.startsWith(`${e} `) && v === id)?.[0].slice(e.length + 1)
      return actual[e].find((r) => r.key === key)?.row
    }
    expect(byLegacy('users', 'bob')).toMatchObject({ name: 'Bob' }) // the newer copy, not "Bob (old name)"
    expect(byLegacy('groups', 'livestream:concert')).toMatchObject({ name: 'Concert', type: 'public' })
    expect(byLegacy('groups', 'support:ticket-9')).toMatchObject({ type: 'private' })
    expect(byLegacy('groups', `messaging:${DM_AB}`)).toBeUndefined()
    expect(byLegacy('messages', 'd-1')).toMatchObject({ receiver_type: 'user' })
    expect(byLegacy('messages', 'm-5')).toMatchObject({ type: 'image' })

    await box.tsb.sandbox.whenIdle()
    const before = (await box.tsb.sandbox.requests(appId)).length
    const again = await runCli(['run', '--config', cfg]).done
    expect(again.code, again.stderr.slice(-3000)).toBe(3)
    await box.tsb.sandbox.whenIdle()
    expect((await box.tsb.sandbox.requests(appId)).length).toBe(before)
  }, 120_000)
})

it('a run killed with SIGKILL while it plans and twice while it loads resumes to exactly the expected contents', async () => {
  const fx = writeStreamFixture('json', { seed: largeStreamSeed(1500) })
  box.cleanups.push(() => fx.drop())
  const policies: PoliciesInput = { retention: { oldMessages: 'send' } }
  const state = await createTestDatabase('cf_stream_state')
  box.cleanups.push(() => dropWithin(state))
  const { app, cfg } = await resumeRun(box.tsb, {
    stateUrl: state.url,
    source: { connector: 'stream-chat', path: fx.path, pageSize: 10, maxElementBytes: fx.seed.maxElementBytes },
    policies,
  })
  const expected = expectMigration(expectedStream(fx), policies, Date.now())
  expect(expected.items.messages.size).toBeGreaterThan(1500)
  await killAndResume(cfg, box.tsb, app.id, expected)
}, 300_000)
