/**
 * `chatferry run` on a grown Nextcloud Talk fixture (a few thousand chat comments), killed with
 * SIGKILL while it reads and plans, and twice while it loads (test/helpers/resume-kills.ts), then
 * run again to completion: the sandbox holds exactly what the fixture and the policies predict,
 * item by item, nothing missing and nothing twice. The source is MariaDB with the prefix `nc_` (Postgres when no MariaDB server
 * is there); small source pages and a small quota make both phases last a few seconds.
 */
import { afterAll, beforeAll, expect, it } from 'vitest'

import type { PoliciesInput } from '../../../../mappings/index.ts'
import { expectedNextcloud } from '../../../fixtures/nextcloud-talk/expected.ts'
import { largeNextcloudSeed } from '../../../fixtures/nextcloud-talk/generate.ts'
import { loadNextcloudFixture } from '../../../fixtures/nextcloud-talk/load.ts'
import { createTestDatabase, type TestDatabase } from '../../../helpers/db.ts'
import { dropWithin } from '../../../helpers/loader-harness.ts'
import { createMysqlTestDatabase, mysqlServerUrl } from '../../../helpers/mysql.ts'
import { killAndResume, resumeRun } from '../../../helpers/resume-kills.ts'
import { expectMigration } from '../../../helpers/run-e2e.ts'
import { startTestSandbox, type TestSandbox } from '../../../helpers/sandbox.ts'

const POLICIES: PoliciesInput = { retention: { oldMessages: 'send' }, threads: { quoteParent: true }, systemMessages: { mode: 'as-user' } }
const ENGINE = mysqlServerUrl() === undefined ? 'postgres' : 'mysql'

let tsb: TestSandbox
let source: TestDatabase
let state: TestDatabase

beforeAll(async () => {
  tsb = await startTestSandbox()
  source = ENGINE === 'mysql' ? await createMysqlTestDatabase('cf_nc_resume') : await createTestDatabase('cf_nc_resume')
  state = await createTestDatabase('cf_nc_resume_state')
})

afterAll(async () => {
  await tsb?.close()
  await dropWithin(source)
  await dropWithin(state)
})

it(`SIGKILL while reading and while loading, then a rerun: nothing missing, nothing duplicated (source: ${ENGINE})`, async () => {
  const seed = largeNextcloudSeed({ comments: 3000 })
  await loadNextcloudFixture(ENGINE, source.url, { prefix: 'nc_', seed })
  const { app, cfg } = await resumeRun(tsb, {
    stateUrl: state.url,
    source: { connector: 'nextcloud-talk', url: source.url, tablePrefix: 'nc_', pageSize: 10 },
    policies: POLICIES,
  })
  const expected = expectMigration(expectedNextcloud(seed), POLICIES, Date.now())
  expect(expected.items.messages.size).toBeGreaterThan(2500)
  await killAndResume(cfg, tsb, app.id, expected)
}, 240_000)
