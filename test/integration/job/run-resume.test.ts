/**
 * `chatferry run` killed with SIGKILL at random moments — once while it plans (extract → map →
 * ledger) and twice while it loads — and run again to completion: the sandbox then holds exactly
 * what the source and the policies predict, item by item, nothing missing and nothing twice.
 * A larger Mattermost fixture (a few thousand posts), small source pages and a small quota with a
 * short window make both phases last a few seconds.
 */
import { setTimeout as sleep } from 'node:timers/promises'

import { afterAll, beforeAll, expect, it } from 'vitest'

import type { PoliciesInput } from '../../../mappings/index.ts'
import { expectedMattermost } from '../../fixtures/mattermost/expected.ts'
import { loadMattermostFixture, MINUTE, openFixtureWriter, type Row, T0 } from '../../fixtures/mattermost/load.ts'
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts'
import { type CliRun, runCli } from '../../helpers/ledger-fixtures.ts'
import { dropWithin } from '../../helpers/loader-harness.ts'
import { largeMattermostSeed } from '../../helpers/mattermost-large.ts'
import { killAndResume, resumeRun } from '../../helpers/resume-kills.ts'
import { expectMigration, sandboxContents, writeRunConfig } from '../../helpers/run-e2e.ts'
import { startTestSandbox, type TestSandbox } from '../../helpers/sandbox.ts'

// Skipping policies too: a resumed plan must take the skips of the earlier run from the ledger.
const POLICIES: PoliciesInput = {
  retention: { oldMessages: 'send' },
  threads: { quoteParent: true },
  bots: { mode: 'skip' },
  archivedGroups: { mode: 'skip' },
}

let tsb: TestSandbox
let source: TestDatabase
let source2: TestDatabase
let state: TestDatabase

beforeAll(async () => {
  tsb = await startTestSandbox()
  source = await createTestDatabase('cf_resume_src')
  source2 = await createTestDatabase('cf_resume_src')
  state = await createTestDatabase('cf_resume_state')
})

afterAll(async () => {
  await tsb?.close()
  await dropWithin(source)
  await dropWithin(source2)
  await dropWithin(state)
})

/** Kills the run with SIGKILL; returns what it had printed. */
async function kill(run: CliRun): Promise<{ stdout: string; stderr: string; signal: NodeJS.Signals | null; code: number | null }> {
  run.child.kill('SIGKILL')
  return run.done
}

const between = (min: number, max: number) => min + Math.floor(Math.random() * (max - min))

it.each(['postgres', 'embedded'] as const)(
  'ledger on %s: SIGKILL during planning and twice during loading, then a rerun: nothing missing, nothing duplicated',
  async (ledger) => {
    const seed = largeMattermostSeed('postgres', { posts: 2000 })
    const sourceUrl = ledger === 'postgres' ? source.url : source2.url
    await loadMattermostFixture('postgres', sourceUrl, { seed })
    const { app, cfg } = await resumeRun(tsb, {
      ...(ledger === 'postgres' ? { stateUrl: state.url } : {}),
      source: { connector: 'mattermost', url: sourceUrl, pageSize: 10 },
      policies: POLICIES,
    })
    const expected = expectMigration(expectedMattermost(seed), POLICIES, Date.now())
    expect(expected.items.messages.size).toBeGreaterThan(1700)
    await killAndResume(cfg, tsb, app.id, expected)
  },
  180_000,
)

// Exit 1 promises "rerun resumes". A delta interrupted mid-entity leaves that entity's cursor
// incomplete, and the next `run --delta` refuses ("a delta run needs a completed full read of
// messages first") — see the report; `chatferry run` without --delta does recover.
it('a --delta run killed half-way is resumed by running the same --delta command again', async () => {
  const src = await createTestDatabase('cf_resume_delta_src')
  const st = await createTestDatabase('cf_resume_delta_state')
  try {
    const seed = largeMattermostSeed('postgres', { posts: 1000 })
    await loadMattermostFixture('postgres', src.url, { seed })
    const app = await tsb.app({ retentionDays: 100_000, requestsPerMinute: 6000, windowMs: 10_000 })
    const cfg = writeRunConfig({
      appId: app.id,
      apiKey: app.apiKey,
      baseUrl: app.baseUrl,
      stateUrl: st.url,
      source: { connector: 'mattermost', url: src.url, pageSize: 10 },
      policies: POLICIES,
      load: { quotaWindowMs: 10_000 },
    })
    const full = await runCli(['run', '--config', cfg]).done
    expect(full.code, full.stderr.slice(-2000)).toBe(3)

    // Every post changes after the full read (e.g. a reaction on each), and one is new.
    const now = Date.now()
    const w = await openFixtureWriter('postgres', src.url)
    try {
      await w.exec(`UPDATE posts SET updateat = ${now} WHERE originalid = ''`)
      await w.insert('posts', [
        { ...(seed.posts?.find((p) => p.id === 'p03tie') as Row), id: 'p90late', createat: T0 + 9000 * MINUTE, updateat: now, message: 'Late news' },
      ])
    } finally {
      await w.close()
    }
    const delta = runCli(['run', '--config', cfg, '--delta'])
    await delta.waitFor('planned members', 60_000)
    await sleep(between(0, 300))
    const k = await kill(delta)
    expect(k.signal).toBe('SIGKILL')
    expect(k.stdout).not.toMatch(/policy outcomes:/)

    const again = await runCli(['run', '--config', cfg, '--delta']).done
    expect(again.code, again.stderr.slice(-2000)).toBe(3)
    const after = await sandboxContents(tsb.sandbox, app.id)
    expect(after.messages.filter((m) => m.key === 'p90late')).toHaveLength(1)
  } finally {
    await dropWithin(src)
    await dropWithin(st)
  }
}, 180_000)
