/**
 * Contract of the sandbox's user and group writes over real HTTP (and the typed client on them):
 * each good call changes what the reads show; each documented refusal answers its code and
 * changes nothing; every call lands once in the request log with its endpoint name, key and
 * outcome; the chat budget is the app's own, apart from the import budget.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { PlatformError } from '../../../src/target/errors.ts'
import { WebhookEnvelope } from '../../../src/target/webhooks.ts'
import { chatRaw, chatWorld, chatWriteLines, chatWrites, hookUp, webhookReceiver } from '../../helpers/chat-world.ts'
import { importRaw, startTestSandbox, type TestSandbox } from '../../helpers/sandbox.ts'

let t: TestSandbox
beforeAll(async () => {
  t = await startTestSandbox()
})
afterAll(async () => {
  await t?.close()
})

describe('PUT /users/{uid}', () => {
  it('updates the fields given, unsets avatar/link/metadata, and the reads show it', async () => {
    const { app } = await chatWorld(t)
    await app.client.updateUser('alice', { avatar: 'https://a.example/a.png', metadata: { team: 'x' } })
    const user = await app.client.updateUser('alice', { name: 'Alice B', statusMessage: 'away', tags: ['ops'], unset: ['avatar', 'metadata'] })
    expect(user).toMatchObject({ uid: 'alice', name: 'Alice B', statusMessage: 'away', tags: ['ops'] })
    expect(user.avatar).toBeUndefined()
    expect(await app.client.getUser('alice')).toMatchObject({ name: 'Alice B', statusMessage: 'away' })
    expect((await app.client.getUser('alice')).metadata).toBeUndefined()
    expect(await chatWrites(t, app)).toEqual([
      { endpoint: 'users.update', status: 200, code: null, items: [{ key: 'alice', result: 'applied' }] },
      { endpoint: 'users.update', status: 200, code: null, items: [{ key: 'alice', result: 'applied' }] },
    ])
  })

  it.each([
    { name: 'unknown user', uid: 'nobody', body: { name: 'X' }, status: 404, code: 'ERR_UID_NOT_FOUND' },
    { name: 'unknown role', uid: 'bob', body: { role: 'boss' }, status: 404, code: 'ERR_ROLE_NOT_FOUND' },
    { name: 'unknown field', uid: 'bob', body: { nickname: 'B' }, status: 400, code: 'ERR_BAD_REQUEST' },
    { name: 'name over 100 characters', uid: 'bob', body: { name: 'x'.repeat(101) }, status: 400, code: 'ERR_BAD_REQUEST' },
    { name: 'unset of a field that cannot be unset', uid: 'bob', body: { unset: ['name'] }, status: 400, code: 'ERR_BAD_REQUEST' },
  ])('refuses $name with $code and changes nothing', async ({ uid, body, status, code }) => {
    const { app } = await chatWorld(t)
    const res = await chatRaw(app, 'PUT', `users/${uid}`, body)
    expect(res.status).toBe(status)
    expect(res.body.error.code).toBe(code)
    expect((await app.client.getUser('bob')).name).toBe('User bob')
    expect(await chatWrites(t, app)).toEqual([{ endpoint: 'users.update', status, code, items: [{ key: uid, result: 'refused', code }] }])
  })
})

describe('DELETE /users and PUT /users: deactivation', () => {
  it('a deactivated user is listed only withDeactivated, answers ERR_UID_NOT_FOUND, and comes back when reactivated', async () => {
    const { app } = await chatWorld(t)
    expect(await app.client.deactivateUsers(['dave'])).toEqual({ changed: ['dave'], unchanged: [] })
    expect((await app.client.listUsers()).data.map((u) => u.uid)).not.toContain('dave')
    expect((await app.client.listUsers({ withDeactivated: true })).data.map((u) => u.uid)).toContain('dave')
    expect(await app.client.getUser('dave').catch((e: unknown) => (e as PlatformError).code)).toBe('ERR_UID_NOT_FOUND')
    expect((await app.client.findUser('dave'))?.deactivatedAt).toBeGreaterThan(0)
    // Sent again (a crash before the answer): nothing to do, and the answer says so.
    expect(await app.client.deactivateUsers(['dave'])).toEqual({ changed: [], unchanged: ['dave'] })
    expect(await app.client.reactivateUsers(['dave', 'erin'])).toEqual({ changed: ['dave'], unchanged: ['erin'] })
    expect((await app.client.getUser('dave')).deactivatedAt).toBeUndefined()
    expect(chatWriteLines(await chatWrites(t, app))).toEqual([
      'users.deactivate dave applied',
      'users.deactivate dave unchanged',
      'users.reactivate dave applied',
      'users.reactivate erin unchanged',
    ])
    expect(await chatWrites(t, app)).toEqual([
      { endpoint: 'users.deactivate', status: 200, code: null, items: [{ key: 'dave', result: 'applied' }] },
      { endpoint: 'users.deactivate', status: 200, code: null, items: [{ key: 'dave', result: 'unchanged' }] },
      {
        endpoint: 'users.reactivate',
        status: 200,
        code: null,
        items: [
          { key: 'dave', result: 'applied' },
          { key: 'erin', result: 'unchanged' },
        ],
      },
    ])
  })

  it('an unknown uid refuses the whole call with ERR_UID_NOT_FOUND', async () => {
    const { app } = await chatWorld(t)
    const res = await chatRaw(app, 'DELETE', 'users', { uidsToDeactivate: ['dave', 'ghost'] })
    expect(res.status).toBe(404)
    expect(res.body.error.code).toBe('ERR_UID_NOT_FOUND')
    expect((await app.client.getUser('dave')).uid).toBe('dave')
    expect((await chatWrites(t, app))[0]?.items).toEqual([
      { key: 'dave', result: 'refused', code: 'ERR_UID_NOT_FOUND' },
      { key: 'ghost', result: 'refused', code: 'ERR_UID_NOT_FOUND' },
    ])
  })
})

describe('PUT /groups/{guid}', () => {
  it('renames, makes private, sets a description, transfers the owner; the reads and a webhook-free state show it', async () => {
    const { app } = await chatWorld(t)
    const group = await app.client.updateGroup('g1', { name: 'Renamed', type: 'private', description: 'the team', owner: 'bob' })
    expect(group).toMatchObject({ guid: 'g1', name: 'Renamed', type: 'private', description: 'the team', owner: 'bob', membersCount: 3 })
    expect(await app.client.getGroup('g1')).toMatchObject({ name: 'Renamed', type: 'private', owner: 'bob' })
    const unset = await app.client.updateGroup('g1', { unset: ['description'] })
    expect(unset.description).toBeUndefined()
  })

  it('a password group needs a password: ERR_EMPTY_GROUP_PASS', async () => {
    const { app } = await chatWorld(t)
    const res = await chatRaw(app, 'PUT', 'groups/g1', { type: 'password' })
    expect(res.status).toBe(400)
    expect(res.body.error.code).toBe('ERR_EMPTY_GROUP_PASS')
    expect((await app.client.getGroup('g1')).type).toBe('public')
    expect((await app.client.updateGroup('g1', { type: 'password', password: 's3cret' })).type).toBe('password')
  })

  it.each([
    { name: 'unknown group', guid: 'nope', body: { name: 'X' }, headers: {} as Record<string, string>, status: 404, code: 'ERR_GUID_NOT_FOUND' },
    { name: 'unknown owner', guid: 'g1', body: { owner: 'ghost' }, headers: {}, status: 404, code: 'ERR_UID_NOT_FOUND' },
    { name: 'a type that does not exist', guid: 'g1', body: { type: 'secret' }, headers: {}, status: 400, code: 'ERR_BAD_REQUEST' },
    {
      name: 'onBehalfOf a participant',
      guid: 'g1',
      body: { name: 'X' },
      headers: { onBehalfOf: 'bob' },
      status: 403,
      code: 'ERR_GROUP_NO_ADMIN_SCOPE',
    },
  ])('refuses $name with $code', async ({ guid, body, headers, status, code }) => {
    const { app } = await chatWorld(t)
    const res = await chatRaw(app, 'PUT', `groups/${guid}`, body, headers)
    expect(res.status).toBe(status)
    expect(res.body.error.code).toBe(code)
    expect((await app.client.getGroup('g1')).name).toBe('Group one')
    expect(await chatWrites(t, app)).toEqual([{ endpoint: 'groups.update', status, code, items: [{ key: guid, result: 'refused', code }] }])
  })

  it('onBehalfOf an admin updates and ignores owner (documented)', async () => {
    const { app } = await chatWorld(t)
    const group = await app.client.updateGroup('g1', { name: 'By alice', owner: 'bob' }, { onBehalfOf: 'alice' })
    expect(group).toMatchObject({ name: 'By alice', owner: 'alice' })
  })
})

describe('group webhooks', () => {
  it('group_updated, group_owner_transferred (owner changed) and group_deleted carry the group', async () => {
    const hook = await webhookReceiver()
    try {
      const { app } = await chatWorld(t)
      await hookUp(t, app, hook.url, ['group_updated', 'group_owner_transferred', 'group_deleted'])
      await app.client.updateGroup('g1', { name: 'Renamed' })
      await app.client.updateGroup('g1', { owner: 'carol' })
      await app.client.deleteGroup('g1')
      await t.sandbox.whenIdle()
      const envelopes = hook.received.map((r) => WebhookEnvelope.parse(r))
      expect(envelopes.map((e) => `${e.trigger} ${(e.data.group as { name: string }).name}`).sort()).toEqual([
        'group_deleted Renamed',
        'group_owner_transferred Renamed',
        'group_updated Renamed',
        'group_updated Renamed',
      ])
    } finally {
      await hook.close()
    }
  })
})

describe('DELETE /groups/{guid}', () => {
  it('removes the group, its members and its messages', async () => {
    const { app } = await chatWorld(t)
    await app.client.deleteGroup('g1')
    expect(await app.client.getGroup('g1').catch((e: unknown) => (e as PlatformError).code)).toBe('ERR_GUID_NOT_FOUND')
    expect((await app.client.listMessages({ limit: 100 })).data.map((m) => m.receiver)).toEqual(['alice'])
    expect(await app.client.deleteGroup('g1').catch((e: unknown) => (e as PlatformError).code)).toBe('ERR_GUID_NOT_FOUND')
    expect((await chatWrites(t, app)).map((e) => [e.endpoint, e.status, e.items])).toEqual([
      ['groups.delete', 200, [{ key: 'g1', result: 'applied' }]],
      ['groups.delete', 404, [{ key: 'g1', result: 'refused', code: 'ERR_GUID_NOT_FOUND' }]],
    ])
  })
})

describe('the chat budget', () => {
  it('is per app and apart from the import budget: a chat 429 with Retry-After, imports still go', async () => {
    const { app } = await chatWorld(t, { chatRequestsPerMinute: 2, requestsPerMinute: 1000 })
    const other = await chatWorld(t, { chatRequestsPerMinute: 2 })
    await app.client.updateUser('bob', { name: 'B1' })
    await app.client.updateUser('bob', { name: 'B2' })
    const refused = await chatRaw(app, 'PUT', 'users/bob', { name: 'B3' })
    expect(refused.status).toBe(429)
    expect(refused.body.error.code).toBe('ERR_TOO_MANY_REQUESTS')
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    expect((await importRaw(app, 'users', { users: { zed: { uid: 'zed', name: 'Zed' } } })).status).toBe(200)
    expect((await other.app.client.updateUser('bob', { name: 'other app' })).name).toBe('other app')
    const log = await chatWrites(t, app)
    expect(log.at(-1)).toEqual({
      endpoint: 'users.update',
      status: 429,
      code: 'ERR_TOO_MANY_REQUESTS',
      items: [{ key: 'bob', result: 'unprocessed', code: 'ERR_TOO_MANY_REQUESTS' }],
    })
  })

  it('the older /v3.0 prefix answers the same calls', async () => {
    const { app } = await chatWorld(t)
    const res = await chatRaw({ ...app, baseUrl: app.baseUrl.replace(/\/v3$/, '/v3.0') }, 'PUT', 'users/bob', { name: 'Old prefix' })
    expect(res.status).toBe(200)
    expect((await app.client.getUser('bob')).name).toBe('Old prefix')
  })

  it('an API key of another app is refused before anything is logged', async () => {
    const { app } = await chatWorld(t)
    const other = await t.app()
    const res = await chatRaw({ ...app, apiKey: other.apiKey }, 'PUT', 'users/bob', { name: 'X' })
    expect(res.status).toBe(401)
    expect(await chatWrites(t, app)).toEqual([])
  })
})

describe('the client refuses before sending', () => {
  it.each([
    { name: 'an empty user update', call: (c: TestClient) => c.updateUser('bob', {}) },
    { name: 'a field both set and unset', call: (c: TestClient) => c.updateUser('bob', { avatar: 'https://x.example/a', unset: ['avatar'] }) },
    { name: 'a password group without a password', call: (c: TestClient) => c.updateGroup('g1', { type: 'password' }) },
  ])('$name (TypeError, nothing in the request log)', async ({ call }) => {
    const { app } = await chatWorld(t)
    await expect(call(app.client)).rejects.toBeInstanceOf(TypeError)
    expect(await chatWrites(t, app)).toEqual([])
  })
})

type TestClient = Awaited<ReturnType<typeof chatWorld>>['app']['client']
