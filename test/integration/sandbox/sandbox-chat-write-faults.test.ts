/**
 * The chat writes' fault knobs (`chatFaults`), which let a test of the update lane meet the
 * ambiguous cases on purpose: an answer lost after the change was applied, a connection dropped
 * before, a 429 under the limit. Proven from the reads and the request log.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import type { PlatformError } from '../../../src/target/errors.ts'
import { chatWorld } from '../../helpers/chat-world.ts'
import { mgmtRaw, startTestSandbox, type TestSandbox } from '../../helpers/sandbox.ts'

let t: TestSandbox
beforeAll(async () => {
  t = await startTestSandbox()
})
afterAll(async () => {
  await t?.close()
})

async function lastChatEntry(appId: string) {
  const log = await t.sandbox.requests(appId)
  const e = log.at(-1)
  return { endpoint: e?.endpoint, status: e?.status, fault: e?.fault, items: e?.items }
}

describe('chatFaults', () => {
  it('dropAfterCommit: the change is applied, the answer never comes (a network error for the client)', async () => {
    const { app } = await chatWorld(t, { chatFaults: { dropAfterCommit: 1 } })
    const err = (await app.client.updateUser('bob', { name: 'Bobby' }).catch((e: unknown) => e)) as PlatformError
    expect(err).toMatchObject({ kind: 'network', retryable: true })
    expect(await lastChatEntry(app.id)).toEqual({
      endpoint: 'users.update',
      status: null,
      fault: 'dropAfterCommit',
      items: [{ key: 'bob', result: 'applied' }],
    })
    await t.sandbox.settings(app.id, { chatFaults: { dropAfterCommit: 0 } })
    expect((await app.client.getUser('bob')).name).toBe('Bobby')
    // Sent again, as a lane does after a lost answer: the documented "already" code says it is done.
    await app.client.banMember('g1', 'carol')
    expect(await app.client.banMember('g1', 'carol').catch((e: unknown) => (e as PlatformError).code)).toBe('ERR_ALREADY_BANNED')
  })

  it('dropBeforeCommit: nothing changes, the keys are logged unprocessed', async () => {
    const { app } = await chatWorld(t, { chatFaults: { dropBeforeCommit: 1 } })
    await expect(app.client.kickMember('g1', 'bob')).rejects.toMatchObject({ kind: 'network' })
    expect(await lastChatEntry(app.id)).toEqual({
      endpoint: 'members.kick',
      status: null,
      fault: 'dropBeforeCommit',
      items: [{ key: 'g1_member_bob', result: 'unprocessed' }],
    })
    expect((await app.client.findGroupMember('g1', 'bob')).state).toBe('member')
  })

  it('extra429: a 429 with Retry-After 1 under the limit, nothing changes', async () => {
    const { app } = await chatWorld(t, { chatFaults: { extra429: 1 } })
    const err = (await app.client.updateUser('bob', { name: 'X' }).catch((e: unknown) => e)) as PlatformError
    expect(err).toMatchObject({ status: 429, code: 'ERR_TOO_MANY_REQUESTS', retryAfterMs: 1000 })
    expect(await lastChatEntry(app.id)).toMatchObject({ status: 429, fault: 'extra429', items: [{ key: 'bob', result: 'unprocessed' }] })
    expect((await app.client.listUsers()).data.find((u) => u.uid === 'bob')?.name).toBe('User bob')
  })

  it('is a settings patch merged field by field', async () => {
    const { app } = await chatWorld(t)
    const res = await mgmtRaw(t.sandbox, `/sandbox/apps/${app.id}/settings`, { method: 'PUT', body: { chatFaults: { extra429: 0.5 } } })
    expect(res.status).toBe(200)
    expect(res.body.data.chatFaults).toEqual({ extra429: 0.5, dropBeforeCommit: 0, dropAfterCommit: 0 })
  })
})
