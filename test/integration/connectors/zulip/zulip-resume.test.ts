/**
 * `chatferry run` on a Zulip source killed with SIGKILL while it reads (plans) and twice while it
 * loads, then run again to completion: the sandbox holds exactly what the fixture and the policies
 * predict, item by item, nothing missing and nothing twice. A realm of a few thousand generated
 * messages (plus the hand-made fixture's rows, bad ones included), small source pages and a small
 * quota with a short window make both phases last a few seconds.
 */
import { afterAll, beforeAll, expect, it } from 'vitest'

import type { PoliciesInput } from '../../../../mappings/index.ts'
import { expectedZulip } from '../../../fixtures/zulip/expected.ts'
import { largeZulipSeed } from '../../../fixtures/zulip/generate.ts'
import { loadZulipFixture } from '../../../fixtures/zulip/load.ts'
import { createTestDatabase, type TestDatabase } from '../../../helpers/db.ts'
import { dropWithin } from '../../../helpers/loader-harness.ts'
import { killAndResume, resumeRun } from '../../../helpers/resume-kills.ts'
import { expectMigration } from '../../../helpers/run-e2e.ts'
import { startTestSandbox, type TestSandbox } from '../../../helpers/sandbox.ts'

const POLICIES: PoliciesInput = { retention: { oldMessages: 'send' }, bots: { mode: 'skip' }, archivedGroups: { mode: 'skip' } }

let tsb: TestSandbox
let source: TestDatabase
let state: TestDatabase

beforeAll(async () => {
  tsb = await startTestSandbox()
  source = await createTestDatabase('cf_zulip_resume_src')
  state = await createTestDatabase('cf_zulip_resume_state')
})

afterAll(async () => {
  await tsb?.close()
  await dropWithin(source)
  await dropWithin(state)
})

it('SIGKILL while reading messages and twice while loading, then a rerun: nothing missing, nothing duplicated', async () => {
  const seed = largeZulipSeed({ messages: 3000 })
  await loadZulipFixture(source.url, seed)
  const { app, cfg } = await resumeRun(tsb, {
    stateUrl: state.url,
    source: { connector: 'zulip', url: source.url, realm: 'acme', pageSize: 10 },
    policies: POLICIES,
  })
  const expected = expectMigration(expectedZulip(seed), POLICIES, Date.now())
  expect(expected.items.messages.size).toBeGreaterThan(2500)
  await killAndResume(cfg, tsb, app.id, expected)
}, 240_000)
