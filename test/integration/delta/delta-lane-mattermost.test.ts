/**
 * Issue 13 end to end on the Mattermost fixture (Postgres source and ledger, the CLI as a process,
 * the sandbox over HTTP): bulk load, then the legacy database changes — a new post, an edited post,
 * a deleted post, a renamed user, a deactivated user, a channel made private, a member promoted, a
 * member added, a membership hard-deleted — and `run --delta`. The sandbox's request log must show
 * exactly the expected calls (imports of the new rows; one chat write per change, each once) and
 * nothing else, the platform's state read back through the chat interface must be the source's, and
 * every other row the platform holds must be as it was.
 */
import { afterAll, beforeAll, expect, it } from 'vitest'

import { createPlatformClient } from '../../../src/target/client.ts'
import { type MattermostSeed, MINUTE, MM, openFixtureWriter, type Row, T0 } from '../../fixtures/mattermost/load.ts'
import type { TestDatabase } from '../../helpers/db.ts'
import { lastRequestId, ledgerKeys, receivedSince, touchedRows } from '../../helpers/delta-e2e.ts'
import { runCli } from '../../helpers/ledger-fixtures.ts'
import { type MattermostDeltaWorld, startMattermostDeltaWorld } from '../../helpers/mattermost-delta-world.ts'
import { sandboxContents } from '../../helpers/run-e2e.ts'
import type { TestApp, TestSandbox } from '../../helpers/sandbox.ts'

let world: MattermostDeltaWorld | undefined
let tsb: TestSandbox
let source: TestDatabase
let state: TestDatabase
let app: TestApp
let seed: MattermostSeed
let cfg: string

beforeAll(async () => {
  world = await startMattermostDeltaWorld('cf_dmm')
  ;({ tsb, source, state, app, seed, cfg } = world)
})

afterAll(async () => {
  await world?.close()
})

it('run --delta applies every change of loaded rows through the chat interface, once each, and imports only the new rows', async () => {
  const bulk = await runCli(['run', '--config', cfg]).done
  expect(bulk.code, bulk.stderr.slice(-3000)).toBe(3)
  const jobId = app.id.toLowerCase()
  const before = await lastRequestId(tsb.sandbox, app.id)
  const platformBefore = await sandboxContents(tsb.sandbox, app.id)

  const now = Date.now()
  const w = await openFixtureWriter('postgres', source.url)
  try {
    const post = seed.posts?.find((p) => p.id === 'p03tie') as Row
    await w.insert('posts', [{ ...post, id: 'p30new', createat: T0 + 100 * MINUTE, updateat: now, userid: MM.alice, message: 'A new post' }])
    await w.exec(`UPDATE posts SET message = 'Same millisecond, edited', editat = ${now}, updateat = ${now} WHERE id = 'p03tie'`)
    await w.exec(`UPDATE posts SET deleteat = ${now}, updateat = ${now} WHERE id = 'p09dm'`)
    await w.exec(`UPDATE users SET firstname = 'Robert', lastname = 'Builder', updateat = ${now} WHERE id = '${MM.bob}'`)
    await w.exec(`UPDATE users SET deleteat = ${now}, updateat = ${now} WHERE id = '${MM.eve}'`)
    await w.exec(`UPDATE channels SET type = 'P', updateat = ${now} WHERE id = '${MM.town}'`)
    await w.exec(`UPDATE channelmembers SET schemeadmin = true, lastupdateat = ${now} WHERE channelid = '${MM.town}' AND userid = '${MM.bob}'`)
    const member = seed.channelmembers?.[1] as Row
    await w.insert('channelmembers', [{ ...member, channelid: MM.secret, userid: MM.carol, lastupdateat: now }])
    await w.exec(`DELETE FROM channelmembers WHERE channelid = '${MM.gm}' AND userid = '${MM.carol}'`)
  } finally {
    await w.close()
  }

  const delta = await runCli(['run', '--config', cfg, '--delta', '--json']).done
  // The job's earlier rejects of bad rows are still there: the run ends with 3.
  expect(delta.code, delta.stderr.slice(-3000)).toBe(3)
  const summary = JSON.parse(delta.stdout.trim().split('\n').at(-1) ?? '{}') as { updates?: Record<string, { done: number; rejected: number }> }

  const users = await ledgerKeys(state.url, jobId, 'users')
  const groups = await ledgerKeys(state.url, jobId, 'groups')
  const messages = await ledgerKeys(state.url, jobId, 'messages')
  const key = (m: Map<string, { key: string }>, legacy: string) => m.get(legacy)?.key ?? `(no item for ${legacy})`
  const memberKey = (channel: string, user: string) => `${key(groups, channel)}_member_${key(users, user)}`
  const { imports, writes } = await receivedSince(tsb.sandbox, app.id, before)
  expect(imports).toEqual([`members ${memberKey(MM.secret, MM.carol)}`, `messages ${key(messages, 'p30new')}`].sort())
  expect(writes).toEqual(
    [
      `users.update ${key(users, MM.bob)}`,
      `users.deactivate ${key(users, MM.eve)}`,
      `groups.update ${key(groups, MM.town)}`,
      `members.scope ${memberKey(MM.town, MM.bob)}`,
      `members.kick ${memberKey(MM.gm, MM.carol)}`,
      `messages.update ${messages.get('p03tie')?.platformId}`,
      `messages.delete ${messages.get('p09dm')?.platformId}`,
    ].sort(),
  )
  expect(summary.updates).toMatchObject({
    'user.update': { done: 1, rejected: 0 },
    'user.deactivate': { done: 1, rejected: 0 },
    'group.update': { done: 1, rejected: 0 },
    'member.scope': { done: 1, rejected: 0 },
    'member.kick': { done: 1, rejected: 0 },
    'message.edit': { done: 1, rejected: 0 },
    'message.delete': { done: 1, rejected: 0 },
  })

  // Nothing else on the platform changed: exactly the rows of the changed and new items differ.
  expect(touchedRows(platformBefore, await sandboxContents(tsb.sandbox, app.id))).toEqual(
    [
      `users ${key(users, MM.bob)}`,
      `users ${key(users, MM.eve)}`,
      `groups ${key(groups, MM.town)}`,
      `members ${memberKey(MM.town, MM.bob)}`,
      `members ${memberKey(MM.gm, MM.carol)} (gone)`,
      `members ${memberKey(MM.secret, MM.carol)}`,
      `messages ${key(messages, 'p03tie')}`,
      `messages ${key(messages, 'p09dm')}`,
      `messages ${key(messages, 'p30new')}`,
    ].sort(),
  )

  // The platform's state, through the chat interface.
  const client = createPlatformClient({ baseUrl: app.baseUrl, apiKey: app.apiKey })
  expect((await client.findUser(key(users, MM.bob)))?.name).toBe('Robert Builder')
  expect((await client.findUser(key(users, MM.eve)))?.deactivatedAt).toBeDefined()
  expect((await client.getGroup(key(groups, MM.town))).type).toBe('private')
  expect(await client.findGroupMember(key(groups, MM.town), key(users, MM.bob))).toMatchObject({ state: 'member', member: { scope: 'admin' } })
  expect((await client.findGroupMember(key(groups, MM.gm), key(users, MM.carol))).state).toBe('none')
  expect((await client.findGroupMember(key(groups, MM.secret), key(users, MM.carol))).state).toBe('member')
  expect((await client.getMessage(messages.get('p03tie')?.platformId ?? '')).data?.text).toBe('Same millisecond, edited')
  expect((await client.getMessage(messages.get('p09dm')?.platformId ?? '')).deletedAt).toBeDefined()

  // A second delta with no change in the source sends nothing at all.
  const quiet = await lastRequestId(tsb.sandbox, app.id)
  const again = await runCli(['run', '--config', cfg, '--delta']).done
  expect(again.code, again.stderr.slice(-3000)).toBe(3)
  expect(await receivedSince(tsb.sandbox, app.id, quiet)).toEqual({ imports: [], writes: [] })
}, 180_000)
