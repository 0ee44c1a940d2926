/**
 * Contract of the request log's `items`: for every data-import request, the keys it carried and
 * what the sandbox did with each (created / exists / refused / unwritten / unprocessed), whether or
 * not the answer reached the client. The delivery audit (test/helpers/delivery-audit.ts) relies on it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { importRaw, mgmtRaw, startTestSandbox, type TestSandbox } from '../../helpers/sandbox.ts'

let t: TestSandbox

beforeAll(async () => {
  t = await startTestSandbox()
})
afterAll(async () => {
  await t?.close()
})

const usersBody = (uids: readonly string[]) => ({ users: Object.fromEntries(uids.map((uid) => [uid, { uid, name: `User ${uid}` }])) })

describe('request log items', () => {
  it('records each key with created, exists (and its code) or refused (and its code), in body order', async () => {
    const app = await t.app()
    expect((await importRaw(app, 'users', usersBody(['a', 'b']))).status).toBe(200)
    const res = await importRaw(app, 'users', { users: { b: { uid: 'b', name: 'B' }, c: { uid: 'c', name: 'C' }, d: { uid: 'd' } } })
    expect(res.status).toBe(200)
    const g = await importRaw(app, 'groups', { groups: { g1: { guid: 'g1', name: 'G', type: 'public' } } })
    expect(g.status).toBe(200)
    const again = await importRaw(app, 'groups', { groups: { g1: { guid: 'g1', name: 'G', type: 'public' } } })
    expect(again.status).toBe(200)
    const m = await importRaw(app, 'members', { members: { g1_member_a: { memberId: 'g1_member_a', guid: 'g1', uid: 'a', scope: 'participant' } } })
    expect(m.status).toBe(200)
    const m2 = await importRaw(app, 'members', { members: { g1_member_a: { memberId: 'g1_member_a', guid: 'g1', uid: 'a', scope: 'participant' } } })
    expect(m2.status).toBe(200)
    const sentAt = Math.floor(Date.now() / 1000) - 3600
    const msg = {
      m1: { muid: 'm1', sender: 'a', receiverType: 'user', receiver: 'b', category: 'message', type: 'text', data: { text: 'hi' }, sentAt },
    }
    expect((await importRaw(app, 'messages', { messages: msg })).status).toBe(200)
    expect((await importRaw(app, 'messages', { messages: msg })).status).toBe(200)

    const log = await t.sandbox.requests(app.id)
    expect(log.map((e) => e.items)).toEqual([
      [
        { key: 'a', result: 'created' },
        { key: 'b', result: 'created' },
      ],
      [
        { key: 'b', result: 'exists', code: 'ERR_UID_ALREADY_EXISTS' },
        { key: 'c', result: 'created' },
        { key: 'd', result: 'refused', code: 'ERR_BAD_REQUEST' },
      ],
      [{ key: 'g1', result: 'created' }],
      [{ key: 'g1', result: 'exists', code: 'ERR_GUID_ALREADY_EXISTS' }],
      [{ key: 'g1_member_a', result: 'created' }],
      [{ key: 'g1_member_a', result: 'exists', code: 'ERR_ALREADY_JOINED' }],
      [{ key: 'm1', result: 'created' }],
      [{ key: 'm1', result: 'exists', code: 'ERR_IMPORT_MUID_ALREADY_EXISTS' }],
    ])
  })

  it('a partial commit: the written items are created, the others unwritten, under a 500', async () => {
    const app = await t.app({ faults: { partialCommit500: 1, seed: 7 } })
    const uids = Array.from({ length: 10 }, (_, i) => `p${i}`)
    expect((await importRaw(app, 'users', usersBody(uids))).status).toBe(500)
    const stored = (await t.sandbox.store.selectFrom('users').select('uid').where('app_id', '=', app.id).execute()).map((r) => r.uid)
    const [entry] = await t.sandbox.requests(app.id)
    expect(entry).toMatchObject({ status: 500, fault: 'partialCommit500', committed: stored.length })
    expect(entry?.items?.map((i) => i.key)).toEqual(uids)
    expect(
      entry?.items
        ?.filter((i) => i.result === 'created')
        .map((i) => i.key)
        .sort(),
    ).toEqual(stored.sort())
    expect(entry?.items?.filter((i) => i.result === 'unwritten')).toHaveLength(10 - stored.length)
  })

  it('requests never processed carry their keys as unprocessed; a drop after commit keeps its outcomes', async () => {
    const app = await t.app({ faults: { extra429: 1, seed: 1 } })
    expect((await importRaw(app, 'users', usersBody(['x']))).status).toBe(429)
    await t.sandbox.settings(app.id, { faults: { extra429: 0, dropBeforeCommit: 1 } })
    await expect(importRaw(app, 'users', usersBody(['y']))).rejects.toThrow()
    await t.sandbox.settings(app.id, { faults: { dropBeforeCommit: 0, dropAfterCommit: 1 } })
    await expect(importRaw(app, 'users', usersBody(['z']))).rejects.toThrow()
    await t.sandbox.settings(app.id, { faults: { dropAfterCommit: 0 } })
    // Refused as a whole (over the item limit): carried, not processed.
    const many = Array.from({ length: 51 }, (_, i) => `n${i}`)
    expect((await importRaw(app, 'users', usersBody(many))).status).toBe(400)
    // Not an import body at all.
    expect((await importRaw(app, 'users', { people: {} })).status).toBe(400)

    const log = await t.sandbox.requests(app.id)
    expect(log.map((e) => [e.status, e.fault])).toEqual([
      [429, 'extra429'],
      [null, 'dropBeforeCommit'],
      [null, 'dropAfterCommit'],
      [400, null],
      [400, null],
    ])
    expect(log[0]?.items).toEqual([{ key: 'x', result: 'unprocessed' }])
    expect(log[1]?.items).toEqual([{ key: 'y', result: 'unprocessed' }])
    expect(log[2]?.items).toEqual([{ key: 'z', result: 'created' }])
    expect(log[3]?.items).toHaveLength(51)
    expect(log[3]?.items?.every((i) => i.result === 'unprocessed')).toBe(true)
    expect(log[4]?.items).toBeNull()
  })

  it('is readable over HTTP', async () => {
    const app = await t.app()
    await importRaw(app, 'users', usersBody(['h']))
    const res = await mgmtRaw(t.sandbox, `/sandbox/apps/${app.id}/requests`)
    expect(res.status).toBe(200)
    expect(res.body.data).toEqual([expect.objectContaining({ endpoint: 'users', status: 200, items: [{ key: 'h', result: 'created' }] })])
  })
})
