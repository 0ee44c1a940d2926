/**
 * Contract of the sandbox's data-import endpoints: one test per documented rule (facts §1, §2,
 * §4), over real HTTP, on a real Postgres database, through the typed platform client.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { importRaw, nowSeconds, seedGroup, seedUsers, startTestSandbox, type TestApp, type TestSandbox } from '../../helpers/sandbox.ts'

let t: TestSandbox

beforeAll(async () => {
  t = await startTestSandbox()
})
afterAll(async () => {
  await t?.close()
})

function code(result: { ok: true } | { ok: false; code: string } | undefined): string | undefined {
  if (result === undefined) {
    return undefined
  }
  return result.ok ? 'OK' : result.code
}

async function importOne(app: TestApp, entity: string, key: string, item: unknown) {
  return app.client.importRaw(entity as 'users', [key], { [entity]: { [key]: item } })
}

describe('users', () => {
  it('imports users and echoes the documented fields, HTTP 200', async () => {
    const app = await t.app()
    const res = await app.client.importUsers([
      { uid: 'alice', name: 'Alice', avatar: 'https://x/a.png', metadata: { a: 1 }, tags: ['t'], createdAt: 1_700_000_000 },
    ])
    expect(res.status).toBe(200)
    const r = res.results.get('alice')
    expect(r).toMatchObject({
      ok: true,
      data: {
        uid: 'alice',
        name: 'Alice',
        avatar: 'https://x/a.png',
        metadata: { a: 1 },
        status: 'offline',
        role: 'default',
        createdAt: 1_700_000_000,
      },
    })
  })

  it('answers 200 with per-item results when some items fail', async () => {
    const app = await t.app()
    const res = await app.client.importRaw('users', ['ok', 'bad'], { users: { ok: { uid: 'ok', name: 'Ok' }, bad: { uid: 'bad' } } })
    expect(res.status).toBe(200)
    expect(code(res.results.get('ok'))).toBe('OK')
    expect(code(res.results.get('bad'))).toBe('ERR_BAD_REQUEST')
  })

  it('refuses an item whose key differs from its uid, with details', async () => {
    const app = await t.app()
    const res = await importRaw(app, 'users', { users: { alice: { uid: 'bob', name: 'B' } } })
    expect(res.status).toBe(200)
    expect(res.body.data.alice).toMatchObject({ success: false, error: { code: 'ERR_BAD_REQUEST', details: { uid: [expect.any(String)] } } })
  })

  it('lowercases ids and keys the result as sent', async () => {
    const app = await t.app()
    const res = await importOne(app, 'users', 'MixedCase', { uid: 'MixedCase', name: 'M' })
    expect(res.results.get('MixedCase')).toMatchObject({ ok: true, data: { uid: 'mixedcase' } })
    const page = await app.client.listUsers()
    expect(page.data.map((u) => u.uid)).toEqual(['mixedcase'])
  })

  it('two keys that lowercase to the same uid: the second gets ERR_UID_ALREADY_EXISTS', async () => {
    const app = await t.app()
    const res = await importRaw(app, 'users', { users: { Dup: { uid: 'Dup', name: 'A' }, dup: { uid: 'dup', name: 'B' } } })
    expect(res.body.data.Dup.success).toBe(true)
    expect(res.body.data.dup.error.code).toBe('ERR_UID_ALREADY_EXISTS')
  })

  it('uid: 100 characters pass, 101 are refused', async () => {
    const app = await t.app()
    const ok = 'a'.repeat(100)
    const long = 'b'.repeat(101)
    const res = await app.client.importRaw('users', [ok, long], { users: { [ok]: { uid: ok, name: 'x' }, [long]: { uid: long, name: 'x' } } })
    expect(code(res.results.get(ok))).toBe('OK')
    expect(code(res.results.get(long))).toBe('ERR_BAD_REQUEST')
  })

  it('uid must be alpha-dash', async () => {
    const app = await t.app()
    const res = await importOne(app, 'users', 'a b', { uid: 'a b', name: 'x' })
    expect(code(res.results.get('a b'))).toBe('ERR_BAD_REQUEST')
  })

  it('name: 100 characters pass, 101 are refused', async () => {
    const app = await t.app()
    const res = await app.client.importRaw('users', ['n100', 'n101'], {
      users: { n100: { uid: 'n100', name: 'n'.repeat(100) }, n101: { uid: 'n101', name: 'n'.repeat(101) } },
    })
    expect(code(res.results.get('n100'))).toBe('OK')
    expect(res.results.get('n101')).toMatchObject({ ok: false, code: 'ERR_BAD_REQUEST' })
  })

  it('re-import gives ERR_UID_ALREADY_EXISTS and does not overwrite', async () => {
    const app = await t.app()
    await app.client.importUsers([{ uid: 'alice', name: 'First' }])
    const again = await app.client.importUsers([{ uid: 'alice', name: 'Second' }])
    expect(code(again.results.get('alice'))).toBe('ERR_UID_ALREADY_EXISTS')
    const [user] = (await app.client.listUsers()).data
    expect(user?.name).toBe('First')
  })

  it('50 items per request pass; 51 are refused as a whole and nothing is written', async () => {
    const app = await t.app()
    const fifty = Array.from({ length: 50 }, (_, i) => ({ uid: `u${i}`, name: `U${i}` }))
    const ok = await app.client.importUsers(fifty)
    expect([...ok.results.values()].every((r) => r.ok)).toBe(true)
    const users = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`v${i}`, { uid: `v${i}`, name: 'V' }]))
    const res = await importRaw(app, 'users', { users })
    expect(res.status).toBe(400)
    expect(res.body.error).toMatchObject({ code: 'ERR_BAD_REQUEST', source: 'sandbox', message: expect.stringContaining('50') })
    const count = await t.sandbox.store
      .selectFrom('users')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('app_id', '=', app.id)
      .executeTakeFirstOrThrow()
    expect(Number(count.n)).toBe(50)
  })

  it.each([
    ['users', 'ERR_IMPORT_INVALID_USER_FORMAT'],
    ['groups', 'ERR_IMPORT_INVALID_GROUP_FORMAT'],
    ['members', 'ERR_IMPORT_INVALID_MEMBER_FORMAT'],
    ['messages', 'ERR_IMPORT_INVALID_MESSAGE_FORMAT'],
  ])('a malformed %s wrapper is 400 %s', async (entity, expected) => {
    const app = await t.app()
    for (const body of [{}, { [entity]: [] }, { [entity]: 'x' }, { [entity]: {} }]) {
      const res = await importRaw(app, entity, body)
      expect(res.status).toBe(400)
      expect(res.body.error.code).toBe(expected)
    }
  })

  it('a role that does not exist is ERR_ROLE_NOT_FOUND; one listed in settings.roles passes', async () => {
    const app = await t.app({ roles: ['moderator-role'] })
    const res = await app.client.importRaw('users', ['a', 'b'], {
      users: { a: { uid: 'a', name: 'A', role: 'nope' }, b: { uid: 'b', name: 'B', role: 'moderator-role' } },
    })
    expect(code(res.results.get('a'))).toBe('ERR_ROLE_NOT_FOUND')
    expect(code(res.results.get('b'))).toBe('OK')
  })

  it('unknown fields, string timestamps and metadata over 5 KB are ERR_BAD_REQUEST', async () => {
    const app = await t.app()
    const res = await importRaw(app, 'users', {
      users: {
        a: { uid: 'a', name: 'A', nickname: 'x' },
        b: { uid: 'b', name: 'B', createdAt: '1673421419' },
        c: { uid: 'c', name: 'C', metadata: { pad: 'x'.repeat(5 * 1024) } },
      },
    })
    expect(res.body.data.a.error).toMatchObject({ code: 'ERR_BAD_REQUEST', details: { nickname: expect.any(Array) } })
    expect(res.body.data.b.error).toMatchObject({ code: 'ERR_BAD_REQUEST', details: { createdAt: expect.any(Array) } })
    expect(res.body.data.c.error).toMatchObject({ code: 'ERR_BAD_REQUEST', details: { metadata: expect.any(Array) } })
  })

  it('U+0000 and unpaired surrogates anywhere in an item are ERR_BAD_REQUEST naming the field; the other items load', async () => {
    const app = await t.app()
    // JSON.stringify writes the characters as \u0000 / \ud800 escapes, as any client would.
    const res = await importRaw(app, 'users', {
      users: {
        ok: { uid: 'ok', name: 'Ok \u{1F600}', metadata: { e: '\u{1F600}' } },
        n: { uid: 'n', name: 'N\u0000' },
        m: { uid: 'm', name: 'M', metadata: { deep: [{ 'k\u0000': 1 }] } },
        s: { uid: 's', name: 'S', tags: ['\ud800'] },
      },
    })
    expect(res.status).toBe(200)
    expect(res.body.data.ok).toMatchObject({ success: true })
    expect(res.body.data.n.error).toMatchObject({ code: 'ERR_BAD_REQUEST', details: { name: ['contains U+0000 at position 1'] } })
    expect(res.body.data.m.error).toMatchObject({
      code: 'ERR_BAD_REQUEST',
      details: { 'metadata.deep.0.k\\u0000': ['key contains U+0000 at position 1'] },
    })
    expect(res.body.data.s.error).toMatchObject({
      code: 'ERR_BAD_REQUEST',
      details: { 'tags.0': ['contains an unpaired surrogate U+D800 at position 0'] },
    })
  })

  it('answers under the older /v3.0 prefix too', async () => {
    const app = await t.app()
    const res = await importRaw({ ...app, baseUrl: app.baseUrl.replace(/\/v3$/, '/v3.0') }, 'users', { users: { a: { uid: 'a', name: 'A' } } })
    expect(res.status).toBe(200)
    expect(res.body.data.a.success).toBe(true)
  })
})

describe('groups', () => {
  it('imports a group; the echo has conversationId group_<guid>', async () => {
    const app = await t.app()
    await seedUsers(app, ['owner'])
    const res = await app.client.importGroups([{ guid: 'g1', name: 'G', type: 'public', owner: 'owner', createdAt: 1_700_000_000 }])
    expect(res.results.get('g1')).toMatchObject({
      ok: true,
      data: { guid: 'g1', name: 'G', type: 'public', owner: 'owner', conversationId: 'group_g1', createdAt: 1_700_000_000 },
    })
  })

  it('re-import gives ERR_GUID_ALREADY_EXISTS and does not overwrite', async () => {
    const app = await t.app()
    await app.client.importGroups([{ guid: 'g1', name: 'First', type: 'public' }])
    const again = await app.client.importGroups([{ guid: 'g1', name: 'Second', type: 'private' }])
    expect(code(again.results.get('g1'))).toBe('ERR_GUID_ALREADY_EXISTS')
    expect((await app.client.listGroups()).data[0]).toMatchObject({ name: 'First', type: 'public' })
  })

  it('an owner that does not exist is ERR_UID_NOT_FOUND', async () => {
    const app = await t.app()
    const res = await app.client.importGroups([{ guid: 'g1', name: 'G', type: 'public', owner: 'ghost' }])
    expect(code(res.results.get('g1'))).toBe('ERR_UID_NOT_FOUND')
  })

  it('a password group without password is ERR_EMPTY_GROUP_PASS; a bad type is ERR_BAD_REQUEST', async () => {
    const app = await t.app()
    const res = await importRaw(app, 'groups', {
      groups: { p: { guid: 'p', name: 'P', type: 'password' }, q: { guid: 'q', name: 'Q', type: 'secret' } },
    })
    expect(res.body.data.p.error.code).toBe('ERR_EMPTY_GROUP_PASS')
    expect(res.body.data.q.error).toMatchObject({ code: 'ERR_BAD_REQUEST', details: { type: expect.any(Array) } })
  })
})

describe('members', () => {
  const created = 1_700_000_000

  it('imports a member; re-import is ERR_ALREADY_JOINED', async () => {
    const app = await t.app()
    await seedUsers(app, ['u1'])
    await seedGroup(app, 'g1', created)
    const item = { memberId: 'g1_member_u1', guid: 'g1', uid: 'u1', scope: 'admin' as const, joinedAt: created + 10 }
    const res = await app.client.importMembers([item])
    expect(res.results.get('g1_member_u1')).toMatchObject({ ok: true, data: { guid: 'g1', uid: 'u1', scope: 'admin', joinedAt: created + 10 } })
    const again = await app.client.importMembers([item])
    expect(code(again.results.get('g1_member_u1'))).toBe('ERR_ALREADY_JOINED')
  })

  it('unknown group is ERR_GUID_NOT_FOUND, unknown user ERR_UID_NOT_FOUND', async () => {
    const app = await t.app()
    await seedUsers(app, ['u1'])
    await seedGroup(app, 'g1', created)
    const res = await app.client.importMembers([
      { memberId: 'nog_member_u1', guid: 'nog', uid: 'u1' },
      { memberId: 'g1_member_nou', guid: 'g1', uid: 'nou' },
    ])
    expect(code(res.results.get('nog_member_u1'))).toBe('ERR_GUID_NOT_FOUND')
    expect(code(res.results.get('g1_member_nou'))).toBe('ERR_UID_NOT_FOUND')
  })

  it('joinedAt must be after the group createdAt and before now (ERR_IMPORT_INVALID_JOINEDAT at both edges)', async () => {
    const app = await t.app()
    await seedUsers(app, ['a', 'b', 'c', 'd'])
    await seedGroup(app, 'g1', created)
    const now = nowSeconds()
    const res = await app.client.importMembers([
      { memberId: 'g1_member_a', guid: 'g1', uid: 'a', joinedAt: created },
      { memberId: 'g1_member_b', guid: 'g1', uid: 'b', joinedAt: created + 1 },
      { memberId: 'g1_member_c', guid: 'g1', uid: 'c', joinedAt: now + 1 },
      { memberId: 'g1_member_d', guid: 'g1', uid: 'd', joinedAt: now - 2 },
    ])
    expect(code(res.results.get('g1_member_a'))).toBe('ERR_IMPORT_INVALID_JOINEDAT')
    expect(code(res.results.get('g1_member_b'))).toBe('OK')
    expect(code(res.results.get('g1_member_c'))).toBe('ERR_IMPORT_INVALID_JOINEDAT')
    expect(code(res.results.get('g1_member_d'))).toBe('OK')
  })

  it('a memberId that is not the key, or not <guid>_member_<uid>, is ERR_BAD_REQUEST', async () => {
    const app = await t.app()
    const res = await importRaw(app, 'members', {
      members: {
        g1_member_a: { memberId: 'g1_member_b', guid: 'g1', uid: 'b' },
        g1_member_c: { memberId: 'g1_member_c', guid: 'g1', uid: 'x' },
      },
    })
    expect(res.body.data.g1_member_a.error.code).toBe('ERR_BAD_REQUEST')
    expect(res.body.data.g1_member_c.error).toMatchObject({ code: 'ERR_BAD_REQUEST', details: { memberId: expect.any(Array) } })
  })
})

describe('messages', () => {
  // These tests read each refusal's code per item, so their apps answer bad rows per item in a
  // 200 (`badRow500: []`, the kinder knob). The default, a bad row failing the whole request with
  // 500 after the good rows landed, is tested in sandbox-fidelity.test.ts.
  async function chatApp(settings?: Parameters<TestSandbox['app']>[0]) {
    const app = await t.app({ badRow500: [], ...settings })
    await seedUsers(app, ['alice', 'bob', 'carol'])
    await seedGroup(app, 'g1', 1_700_000_000)
    return app
  }
  const text = (muid: string, extra: Record<string, unknown> = {}) => ({
    muid,
    sender: 'alice',
    receiverType: 'user',
    receiver: 'bob',
    category: 'message',
    type: 'text',
    data: { text: 'hello' },
    sentAt: nowSeconds() - 60,
    ...extra,
  })

  it('imports user and group messages with increasing string ids, conversationIds and entities', async () => {
    const app = await chatApp()
    const res = await app.client.importMessages([
      { muid: 'm1', sender: 'alice', receiverType: 'user', receiver: 'bob', data: { text: 'hi' }, sentAt: nowSeconds() - 100 },
      { muid: 'm2', sender: 'bob', receiverType: 'group', receiver: 'g1', data: { text: 'yo' }, sentAt: nowSeconds() - 50 },
    ])
    const m1 = res.results.get('m1') as { ok: true; data: any }
    const m2 = res.results.get('m2') as { ok: true; data: any }
    expect(m1.data).toMatchObject({ muid: 'm1', conversationId: 'alice_user_bob', category: 'message', type: 'text', data: { text: 'hi' } })
    expect(m1.data.data.entities.sender).toMatchObject({ entityType: 'user', entity: { uid: 'alice' } })
    expect(m1.data.data.entities.receiver).toMatchObject({ entityType: 'user', entity: { uid: 'bob' } })
    expect(m2.data).toMatchObject({ conversationId: 'group_g1', receiverType: 'group' })
    expect(m2.data.data.entities.receiver).toMatchObject({ entityType: 'group', entity: { guid: 'g1' } })
    expect(typeof m1.data.id).toBe('string')
    expect(Number(m2.data.id)).toBeGreaterThan(Number(m1.data.id))
    // The conversation id does not depend on the direction.
    const back = await app.client.importMessages([
      { muid: 'm3', sender: 'bob', receiverType: 'user', receiver: 'alice', data: { text: 'x' }, sentAt: nowSeconds() - 10 },
    ])
    expect((back.results.get('m3') as { data: any }).data.conversationId).toBe('alice_user_bob')
  })

  it('a repeated muid is ERR_IMPORT_MUID_ALREADY_EXISTS, across requests and inside one', async () => {
    const app = await chatApp()
    await app.client.importRaw('messages', ['m1'], { messages: { m1: text('m1') } })
    const again = await importRaw(app, 'messages', { messages: { m1: text('m1') } })
    expect(again.body.data.m1.error.code).toBe('ERR_IMPORT_MUID_ALREADY_EXISTS')
    const rows = await t.sandbox.store.selectFrom('messages').select('muid').where('app_id', '=', app.id).execute()
    expect(rows).toHaveLength(1)
  })

  it('unknown sender, receiver user and receiver group are refused per item; *Details do not create them', async () => {
    const app = await chatApp()
    const res = await importRaw(app, 'messages', {
      messages: {
        a: text('a', { sender: 'ghost', senderUserDetails: { uid: 'ghost', name: 'Ghost' } }),
        b: text('b', { receiver: 'nobody', receiverUserDetails: { uid: 'nobody', name: 'N' } }),
        c: text('c', { receiverType: 'group', receiver: 'nog', receiverGroupDetails: { guid: 'nog', name: 'N', type: 'public' } }),
      },
    })
    expect(res.body.data.a.error.code).toBe('ERR_UID_NOT_FOUND')
    expect(res.body.data.b.error.code).toBe('ERR_UID_NOT_FOUND')
    expect(res.body.data.c.error.code).toBe('ERR_GUID_NOT_FOUND')
    const users = await app.client.listUsers()
    expect(users.data.map((u) => u.uid).sort()).toEqual(['alice', 'bob', 'carol'])
  })

  it('retention: a message just inside the window passes, just outside is refused with the documented message', async () => {
    const app = await chatApp()
    const oldest = nowSeconds() - 183 * 86_400
    const res = await importRaw(app, 'messages', { messages: { in: text('in', { sentAt: oldest + 5 }), out: text('out', { sentAt: oldest - 5 }) } })
    expect(res.body.data.in.success).toBe(true)
    expect(res.body.data.out.error).toMatchObject({ code: 'ERR_BAD_REQUEST', message: 'Messages older than 6 months cannot be imported' })
  })

  it('retentionDays is a knob', async () => {
    const app = await chatApp({ retentionDays: 1 })
    const res = await importRaw(app, 'messages', { messages: { old: text('old', { sentAt: nowSeconds() - 2 * 86_400 }) } })
    expect(res.body.data.old.error.message).toBe('Messages older than 1 days cannot be imported')
  })

  it('a sentAt in the future is refused', async () => {
    const app = await chatApp()
    const res = await importRaw(app, 'messages', { messages: { f: text('f', { sentAt: nowSeconds() + 120 }) } })
    expect(res.body.data.f.error.code).toBe('ERR_BAD_REQUEST')
  })

  it('empty or whitespace text on a text message is ERR_EMPTY_MESSAGE_TEXT', async () => {
    const app = await chatApp()
    const res = await importRaw(app, 'messages', {
      messages: { e: text('e', { data: { text: '' } }), w: text('w', { data: { text: ' \n\t' } }), n: text('n', { data: {} }) },
    })
    for (const k of ['e', 'w', 'n']) {
      expect(res.body.data[k].error.code).toBe('ERR_EMPTY_MESSAGE_TEXT')
    }
  })

  it('data of 10,240 bytes passes; 10,241 is ERR_INVALID_MESSAGE_DATA', async () => {
    const app = await chatApp()
    // {"text":"…"} is 11 bytes plus the text.
    const res = await importRaw(app, 'messages', {
      messages: { ok: text('ok', { data: { text: 'a'.repeat(10_240 - 11) } }), big: text('big', { data: { text: 'a'.repeat(10_241 - 11) } }) },
    })
    expect(res.body.data.ok.success).toBe(true)
    expect(res.body.data.big.error.code).toBe('ERR_INVALID_MESSAGE_DATA')
  })

  it('a payload of 65,536 characters passes; 65,537 is refused', async () => {
    const app = await chatApp()
    function sized(muid: string, target: number) {
      const mentioned: Record<string, unknown> = {}
      const m = text(muid, { mentionedUserDetails: mentioned })
      for (let i = 0; JSON.stringify(m).length < target - 1000; i++) {
        mentioned[`p${i}`] = { uid: `p${i}`, name: 'n'.repeat(100) }
      }
      const pad = { uid: 'pad', name: 'p', metadata: { p: '' } }
      mentioned.pad = pad
      pad.metadata.p = 'x'.repeat(target - JSON.stringify(m).length)
      expect(JSON.stringify(m).length).toBe(target)
      return m
    }
    const res = await importRaw(app, 'messages', { messages: { ok: sized('ok', 65_536), big: sized('big', 65_537) } })
    expect(res.body.data.ok.success).toBe(true)
    expect(res.body.data.big.error).toMatchObject({ code: 'ERR_BAD_REQUEST', message: expect.stringContaining('65536') })
  })

  it('each message code of the error guide', async () => {
    const app = await chatApp()
    const res = await importRaw(app, 'messages', {
      messages: {
        rt: text('rt', { receiverType: 'channel' }),
        er: text('er', { receiver: '' }),
        cat: text('cat', { category: 'action' }),
        ecat: text('ecat', { category: '' }),
        etyp: text('etyp', { category: 'custom', type: undefined, data: { customData: { a: 1 } } }),
        typ: text('typ', { type: 'sticker' }),
        media: text('media', { type: 'image', data: { text: 'caption' } }),
        cust: text('cust', { category: 'custom', type: 'poll', data: {} }),
        custbad: text('custbad', { category: 'custom', type: 'poll', data: { customData: 'x' } }),
        txt: text('txt', { data: { text: 42 } }),
        meta: text('meta', { data: { text: 'x', metadata: 'x' } }),
        dat: text('dat', { data: 'x' }),
        key: text('other'),
      },
    })
    const codes = Object.fromEntries(Object.entries(res.body.data as Record<string, any>).map(([k, v]) => [k, v.error?.code]))
    expect(codes).toEqual({
      rt: 'ERR_INVALID_RECEIVER_TYPE',
      er: 'ERR_EMPTY_RECEIVER',
      cat: 'ERR_INVALID_MESSAGE_CATEGORY',
      ecat: 'ERR_EMPTY_MESSAGE_CATEGORY',
      etyp: 'ERR_EMPTY_MESSAGE_TYPE',
      typ: 'ERR_INVALID_MESSAGE_TYPE',
      media: 'ERR_INVALID_MEDIA_MESSAGE',
      cust: 'ERR_EMPTY_CUSTOM_DATA',
      custbad: 'ERR_INVALID_CUSTOM_DATA',
      txt: 'ERR_INVALID_MESSAGE_TEXT',
      meta: 'ERR_INVALID_METADATA',
      dat: 'ERR_INVALID_MESSAGE_DATA',
      key: 'ERR_BAD_REQUEST',
    })
  })

  it('media and custom messages import; attachments are stored by reference', async () => {
    const app = await chatApp()
    const attachments = [{ url: 'https://files.example/a.png', name: 'a.png', mimeType: 'image/png', extension: 'png', size: '123' }]
    const res = await app.client.importMessages([
      {
        muid: 'img',
        sender: 'alice',
        receiverType: 'user',
        receiver: 'bob',
        category: 'message',
        type: 'image',
        data: { attachments },
        sentAt: nowSeconds() - 9,
      },
      {
        muid: 'cus',
        sender: 'alice',
        receiverType: 'group',
        receiver: 'g1',
        category: 'custom',
        type: 'poll',
        data: { customData: { q: '?' } },
        sentAt: nowSeconds() - 8,
      },
    ])
    expect(res.results.get('img')).toMatchObject({ ok: true, data: { type: 'image', data: { attachments } } })
    expect(res.results.get('cus')).toMatchObject({ ok: true, data: { category: 'custom', type: 'poll' } })
  })

  it('group messages do not need membership by default; requireGroupMembership makes it ERR_NOT_A_MEMBER', async () => {
    const lax = await chatApp()
    const a = await importRaw(lax, 'messages', { messages: { m: text('m', { receiverType: 'group', receiver: 'g1' }) } })
    expect(a.body.data.m.success).toBe(true)
    const strict = await chatApp({ requireGroupMembership: true })
    const b = await importRaw(strict, 'messages', { messages: { m: text('m', { receiverType: 'group', receiver: 'g1' }) } })
    expect(b.body.data.m.error.code).toBe('ERR_NOT_A_MEMBER')
  })

  it('stores data, tags and timestamps exactly, whatever characters they hold', async () => {
    const app = await chatApp()
    const tricky = 'quotes \' " , {braces} [x] \\ back\\slash, NULL, unicode ✓ 😀, newline\n'
    const now = nowSeconds()
    await app.client.importMessages([
      {
        muid: 'q',
        sender: 'alice',
        receiverType: 'user',
        receiver: 'bob',
        data: { text: tricky, metadata: { k: [1, null, 'x'] } },
        tags: ['a,b', 'NULL'],
        sentAt: now - 3,
        deliveredAt: now - 2,
        readAt: now - 1,
      },
    ])
    // The list answers the published fields (no tags, deliveredAt, readAt): the stored row holds them all.
    const [m] = (await app.client.listMessages()).data
    expect(m).toMatchObject({ data: { text: tricky, metadata: { k: [1, null, 'x'] } }, sentAt: now - 3, updatedAt: now - 3 })
    const row = await t.sandbox.store
      .selectFrom('messages')
      .select(['muid', 'tags', 'delivered_at', 'read_at'])
      .where('app_id', '=', app.id)
      .executeTakeFirstOrThrow()
    expect({ ...row, delivered_at: Number(row.delivered_at), read_at: Number(row.read_at) }).toEqual({
      muid: 'q',
      tags: ['a,b', 'NULL'],
      delivered_at: now - 2,
      read_at: now - 1,
    })
  })

  it('stores the muid and ignores extra top-level fields beside messages (documented example)', async () => {
    const app = await chatApp()
    const res = await importRaw(app, 'messages', { guid: 'x', name: 'y', type: 'z', messages: { m: text('m') } })
    expect(res.body.data.m.success).toBe(true)
    const row = await t.sandbox.store
      .selectFrom('messages')
      .select(['muid', 'conversation_id'])
      .where('app_id', '=', app.id)
      .executeTakeFirstOrThrow()
    expect(row).toEqual({ muid: 'm', conversation_id: 'alice_user_bob' })
  })
})
