/**
 * `chatferry run` on a Rocket.Chat mongodump killed with SIGKILL in the middle of reading the
 * messages file (its cursor a byte offset into `rocketchat_message.bson`), then again while it
 * loads, and run to completion: the sandbox holds exactly what the dump and the policies predict,
 * item by item; the request log shows no item imported twice, and every bad document is rejected
 * once.
 */
import { statSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'

import pg from 'pg'
import { afterAll, beforeAll, expect, it } from 'vitest'

import type { PoliciesInput } from '../../../../mappings/index.ts'
import { writeRocketChatDump } from '../../../fixtures/rocketchat/dump.ts'
import { expectedRocketChat } from '../../../fixtures/rocketchat/expected.ts'
import { largeRocketChatSeed } from '../../../fixtures/rocketchat/large.ts'
import { createTestDatabase, type TestDatabase } from '../../../helpers/db.ts'
import { runCli } from '../../../helpers/ledger-fixtures.ts'
import { dropWithin } from '../../../helpers/loader-harness.ts'
import { resumeRun } from '../../../helpers/resume-kills.ts'
import { compareWithExpected, countsOf, expectMigration, sandboxContents } from '../../../helpers/run-e2e.ts'
import { checkRejects, rejectsOf } from '../../../helpers/run-rejects.ts'
import { startTestSandbox, type TestSandbox } from '../../../helpers/sandbox.ts'

const POLICIES: PoliciesInput = { retention: { oldMessages: 'send' }, threads: { quoteParent: true }, systemMessages: { mode: 'as-user' } }

let tsb: TestSandbox
let state: TestDatabase

beforeAll(async () => {
  tsb = await startTestSandbox()
  state = await createTestDatabase('cf_rc_resume')
})

afterAll(async () => {
  await tsb?.close()
  await dropWithin(state)
})

it('SIGKILL mid-read of the messages file and again mid-load, then a rerun: nothing missing, nothing imported twice', async () => {
  const seed = largeRocketChatSeed(3000)
  const path = writeRocketChatDump(seed)
  const { app, cfg } = await resumeRun(tsb, { stateUrl: state.url, source: { connector: 'rocketchat', path, pageSize: 10 }, policies: POLICIES })
  const started = Date.now()
  const log: string[] = []
  const savedCursor = async (entity: string) => {
    const client = new pg.Client({ connectionString: state.url })
    await client.connect()
    try {
      const r = await client.query<{ cursor: Record<string, number> | null }>('select cursor from chatferry.cursors where entity = $1', [entity])
      return r.rows[0]?.cursor ?? undefined
    } finally {
      await client.end()
    }
  }

  // 1. While planning: users, groups and members are planned, the messages file is being read.
  const first = runCli(['run', '--config', cfg])
  await first.waitFor('planned members', 60_000)
  // Once the first pages of messages are in the ledger (their cursor with them), at a random moment.
  const planning = Date.now() + 60_000
  while ((await savedCursor('messages')) === undefined && Date.now() < planning) {
    await sleep(20)
  }
  await sleep(Math.floor(Math.random() * 200))
  first.child.kill('SIGKILL')
  const k1 = await first.done
  log.push(`kill 1: ${k1.signal}, platform: ${JSON.stringify(countsOf(await sandboxContents(tsb.sandbox, app.id)))}`)
  expect(k1.signal, log.join('\n')).toBe('SIGKILL')
  expect(k1.stdout, log.join('\n')).not.toMatch(/policy outcomes:/)
  // The saved messages cursor is a position inside the messages file: the rerun resumes there.
  const saved = await savedCursor('messages')
  log.push(`messages cursor after kill 1: ${JSON.stringify(saved)}`)
  expect(saved?.complete, log.join('\n')).toBeUndefined()
  expect(saved?.offset, log.join('\n')).toBeGreaterThan(0)
  expect(saved?.offset, log.join('\n')).toBeLessThan(statSync(join(path, 'rocketchat_message.bson')).size)

  // 2. While loading, once messages flow.
  const second = runCli(['run', '--config', cfg])
  await second.waitFor('loader started', 60_000)
  const until = Date.now() + 60_000
  while (countsOf(await sandboxContents(tsb.sandbox, app.id)).messages === 0 && Date.now() < until) {
    await sleep(50)
  }
  await sleep(Math.floor(Math.random() * 1000))
  second.child.kill('SIGKILL')
  const k2 = await second.done
  const partial = countsOf(await sandboxContents(tsb.sandbox, app.id))
  log.push(`kill 2: ${k2.signal}, platform: ${JSON.stringify(partial)}`)
  expect(k2.signal, log.join('\n')).toBe('SIGKILL')

  const expected = expectMigration(expectedRocketChat(seed), POLICIES, started)
  expect(partial.messages, log.join('\n')).toBeGreaterThan(0)
  expect(partial.messages, log.join('\n')).toBeLessThan(expected.items.messages.size)

  // 3. To the end.
  const last = await runCli(['run', '--config', cfg]).done
  expect(last.code, `${log.join('\n')}\n${last.stderr.slice(-3000)}`).toBe(3)
  expect(last.stdout).toMatch(/read completed by an earlier run/)

  const actual = await sandboxContents(tsb.sandbox, app.id)
  expect(expected.items.messages.size).toBeGreaterThan(2900)
  expect(compareWithExpected(expected.items, actual), log.join('\n')).toEqual([])

  // The request log: every item written once. A batch in flight at the kill may be sent again, but
  // then the platform answers "already exists" for it and writes nothing.
  await tsb.sandbox.whenIdle()
  const written = new Map<string, number>()
  for (const r of await tsb.sandbox.requests(app.id)) {
    for (const item of r.items ?? []) {
      if (item.result === 'created') {
        written.set(`${r.endpoint} ${item.key}`, (written.get(`${r.endpoint} ${item.key}`) ?? 0) + 1)
      }
    }
  }
  expect([...written].filter(([, n]) => n > 1)).toEqual([])
  const { users, groups, members, messages } = expected.items
  expect(written.size).toBe(users.size + groups.size + members.size + messages.size)

  checkRejects(expected, await rejectsOf(cfg))
}, 240_000)
