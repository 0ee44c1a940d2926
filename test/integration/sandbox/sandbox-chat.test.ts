/**
 * Contract of the sandbox's chat read endpoints: page-numbered users/groups/members walked to the
 * last page, the message cursor walked both ways, the documented bounds of perPage and limit.
 */
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import type { ChatMessage } from '../../../src/target/schemas.ts'
import { http, nowSeconds, seedGroup, seedUsers, startTestSandbox, type TestApp, type TestSandbox } from '../../helpers/sandbox.ts'

let t: TestSandbox
let app: TestApp
const uids = Array.from({ length: 125 }, (_, i) => `user-${String(i).padStart(3, '0')}`)
const base = nowSeconds() - 10_000
// The list does not return `muid` (published shape): messages are told apart by their text.
let texts: string[] = []
const textOf = (m: { data?: Record<string, unknown> }): unknown => m.data?.text

beforeAll(async () => {
  t = await startTestSandbox()
  app = await t.app({ requestsPerMinute: 1000 })
  await seedUsers(app, uids)
  for (let g = 0; g < 3; g++) {
    await seedGroup(app, `g${g}`, 1_700_000_000)
  }
  await app.client.importMembers(uids.slice(0, 7).map((uid) => ({ memberId: `g0_member_${uid}`, guid: 'g0', uid, joinedAt: 1_700_000_100 })))
  // 230 messages, imported newest first so creation order and time order differ; pairs share a second.
  const messages = Array.from({ length: 230 }, (_, i) => ({
    muid: `m${String(i).padStart(4, '0')}`,
    sender: uids[i % 5] as string,
    receiverType: (i % 3 === 0 ? 'group' : 'user') as 'group' | 'user',
    receiver: i % 3 === 0 ? 'g0' : (uids[(i % 5) + 1] as string),
    data: { text: `message ${i}` },
    sentAt: base + Math.floor(i / 2),
  })).reverse()
  for (let i = 0; i < messages.length; i += 50) {
    const res = await app.client.importMessages(messages.slice(i, i + 50))
    expect([...res.results.values()].every((r) => r.ok)).toBe(true)
  }
  // The order the list promises: by sentAt, then by platform id (= import order, within a second).
  texts = [...messages].sort((a, b) => a.sentAt - b.sentAt).map((m) => m.data.text)
})
afterAll(async () => {
  await t?.close()
})

describe('page-numbered lists', () => {
  it('users: walks to the last page in creation order with documented pagination meta', async () => {
    const first = await app.client.listUsers({ perPage: 50, page: 1 })
    expect(first.meta.pagination).toEqual({ total: 125, count: 50, per_page: 50, current_page: 1, total_pages: 3 })
    const last = await app.client.listUsers({ perPage: 50, page: 3 })
    expect(last.meta.pagination).toMatchObject({ count: 25, current_page: 3 })
    const beyond = await app.client.listUsers({ perPage: 50, page: 4 })
    expect(beyond.data).toEqual([])
    const all: string[] = []
    for await (const u of app.client.users(50)) {
      all.push(u.uid)
    }
    expect(all).toEqual(uids)
  })

  it('users: perPage defaults to 100; 1000 is allowed, 1001 is 400', async () => {
    const def = await app.client.listUsers()
    expect(def.meta.pagination.per_page).toBe(100)
    expect(def.data).toHaveLength(100)
    expect((await app.client.listUsers({ perPage: 1000 })).data).toHaveLength(125)
    const over = await http(`${app.baseUrl}/users?perPage=1001`, { headers: { apikey: app.apiKey } })
    expect(over.status).toBe(400)
    expect(over.body.error.code).toBe('ERR_BAD_REQUEST')
    const zero = await http(`${app.baseUrl}/users?page=0`, { headers: { apikey: app.apiKey } })
    expect(zero.status).toBe(400)
  })

  it('users/:uid finds one (case-insensitively), 404 ERR_UID_NOT_FOUND otherwise', async () => {
    const one = await http(`${app.baseUrl}/users/USER-001`, { headers: { apikey: app.apiKey } })
    expect(one.body.data).toMatchObject({ uid: 'user-001' })
    const none = await http(`${app.baseUrl}/users/nobody`, { headers: { apikey: app.apiKey } })
    expect(none.status).toBe(404)
    expect(none.body.error.code).toBe('ERR_UID_NOT_FOUND')
  })

  it('groups and group members page the same way, with membersCount', async () => {
    const groups = await app.client.listGroups({ perPage: 2 })
    expect(groups.meta.pagination).toMatchObject({ total: 3, total_pages: 2 })
    expect(groups.data[0]).toMatchObject({ guid: 'g0', membersCount: 7, conversationId: 'group_g0' })
    const members: string[] = []
    for await (const m of app.client.groupMembers('g0', 3)) {
      members.push(m.uid)
    }
    expect(members).toEqual(uids.slice(0, 7))
    const page = await app.client.listGroupMembers('g0', { perPage: 3, page: 3 })
    expect(page.meta.pagination).toEqual({ total: 7, count: 1, per_page: 3, current_page: 3, total_pages: 3 })
    const missing = await http(`${app.baseUrl}/groups/nog/members`, { headers: { apikey: app.apiKey } })
    expect(missing.status).toBe(404)
    expect(missing.body.error.code).toBe('ERR_GUID_NOT_FOUND')
  })
})

describe('message cursor', () => {
  it('defaults to limit 10, oldest first, with meta.current and meta.next', async () => {
    const page = await app.client.listMessages()
    expect(page.meta.current).toEqual({ limit: 10, count: 10 })
    expect(page.data.map(textOf)).toEqual(texts.slice(0, 10))
    const last = page.data[9]
    expect(page.meta.next).toEqual({ affix: 'append', sentAt: last?.sentAt, id: last?.id })
    expect(page.data[0]).toMatchObject({
      id: expect.any(String),
      data: { text: 'message 1' },
      conversationId: 'user-001_user_user-002',
      category: 'message',
      type: 'text',
      sentAt: base,
    })
  })

  it('walks every message with append to the end, where there is no next', async () => {
    const seen: string[] = []
    for await (const m of app.client.messages({ limit: 7 })) {
      seen.push(textOf(m) as string)
    }
    expect(seen).toEqual(texts)
    const pages: number[] = []
    let cursor: { id?: string; sentAt?: number } = {}
    for (;;) {
      const page = await app.client.listMessages({ limit: 100, affix: 'append', ...cursor })
      pages.push(page.data.length)
      if (!page.meta.next) {
        break
      }
      cursor = { id: page.meta.next.id as string, sentAt: page.meta.next.sentAt as number }
    }
    expect(pages).toEqual([100, 100, 30])
  })

  it('prepend walks backwards from a cursor, pages answered oldest-first', async () => {
    const all: ChatMessage[] = []
    for await (const m of app.client.messages({ limit: 1000 })) {
      all.push(m)
    }
    const anchor = all[50] as { id: string; sentAt: number }
    const page = await app.client.listMessages({ limit: 20, affix: 'prepend', id: anchor.id, sentAt: anchor.sentAt })
    expect(page.data.map(textOf)).toEqual(all.slice(30, 50).map(textOf))
    expect(page.meta.next).toMatchObject({ affix: 'prepend', id: all[30]?.id })
    // From the newest message backwards, with no cursor.
    const newest = await app.client.listMessages({ limit: 5, affix: 'prepend' })
    expect(newest.data.map(textOf)).toEqual(texts.slice(-5))
  })

  it('an id alone is a cursor too', async () => {
    const first = await app.client.listMessages({ limit: 5 })
    const next = await app.client.listMessages({ limit: 5, affix: 'append', id: first.data[4]?.id as string })
    expect(next.data.map(textOf)).toEqual(texts.slice(5, 10))
  })

  it('limit 1000 is allowed, 0 and 1001 are 400', async () => {
    expect((await app.client.listMessages({ limit: 1000 })).data).toHaveLength(230)
    for (const limit of [0, 1001]) {
      const res = await http(`${app.baseUrl}/messages?limit=${limit}`, { headers: { apikey: app.apiKey } })
      expect(res.status).toBe(400)
    }
  })

  it('filters: receiverType, conversationId, sender, fromTimestamp/toTimestamp', async () => {
    const group = await app.client.listMessages({ limit: 1000, receiverType: 'group' })
    expect(group.data).toHaveLength(77)
    expect(group.data.every((m) => m.receiverType === 'group')).toBe(true)
    const conv = await app.client.listMessages({ limit: 1000, conversationId: 'group_g0' })
    expect(conv.data).toHaveLength(77)
    const sender = await app.client.listMessages({ limit: 1000, sender: uids[0] as string })
    expect(sender.data).toHaveLength(46)
    const window = await app.client.listMessages({ limit: 1000, fromTimestamp: base + 10, toTimestamp: base + 19 })
    expect(window.data).toHaveLength(20)
    // Documented: toTimestamp alone is ignored.
    const toOnly = await app.client.listMessages({ limit: 1000, toTimestamp: base + 19 })
    expect(toOnly.data).toHaveLength(230)
  })

  it('messages/:id finds one; 404 otherwise', async () => {
    const [m] = (await app.client.listMessages({ limit: 1 })).data
    const one = await http(`${app.baseUrl}/messages/${m?.id}`, { headers: { apikey: app.apiKey } })
    expect(one.body.data).toEqual(m)
    expect(textOf(one.body.data)).toBe(texts[0])
    const none = await http(`${app.baseUrl}/messages/999999999`, { headers: { apikey: app.apiKey } })
    expect(none.status).toBe(404)
  })

  it('an index serves the message order: keyset pages need no sort and no OFFSET', async () => {
    // The test tables are tiny, so the planner is told to avoid sorts and scans, as it would at scale.
    const plan = await t.sandbox.store.transaction().execute(async (trx) => {
      await sql`set local enable_sort = off`.execute(trx)
      await sql`set local enable_seqscan = off`.execute(trx)
      return trx
        .selectFrom('messages')
        .selectAll()
        .where('app_id', '=', app.id)
        .where(sql<boolean>`(sent_at, id) > (${base}, ${1})`)
        .orderBy('sent_at')
        .orderBy('id')
        .limit(11)
        .explain()
    })
    const text = JSON.stringify(plan)
    expect(text).toMatch(/Index Scan using messages_app_sent/)
    expect(text).not.toMatch(/Sort/)
  })
})

describe('the published message shape (cometchat/docs chat-apis.json, GET /messages)', () => {
  // The documented properties of a listed message; `muid`, `tags`, `deliveredAt`, `readAt` are not among them.
  const DOCUMENTED = ['category', 'conversationId', 'data', 'id', 'receiver', 'receiverType', 'sender', 'sentAt', 'type', 'updatedAt']

  it('GET /messages and GET /messages/:id answer the documented fields only, with data.entities and data.metadata', async () => {
    const own = await t.app({ requestsPerMinute: 1000 })
    await seedUsers(own, ['alice', 'bob'])
    await seedGroup(own, 'g1', 1_700_000_000)
    const now = nowSeconds()
    const sent = await own.client.importMessages([
      {
        muid: 'dm',
        sender: 'alice',
        receiverType: 'user',
        receiver: 'bob',
        data: { text: 'hi', metadata: { legacy: { id: 'L1' } } },
        tags: ['t'],
        sentAt: now - 3,
        deliveredAt: now - 2,
        readAt: now - 1,
      },
      { muid: 'gm', sender: 'bob', receiverType: 'group', receiver: 'g1', data: { text: 'yo' }, sentAt: now - 2 },
    ])
    expect([...sent.results.values()].every((r) => r.ok)).toBe(true)
    const list = await http(`${own.baseUrl}/messages?limit=10`, { headers: { apikey: own.apiKey } })
    expect(list.status).toBe(200)
    const [dm, gm] = list.body.data
    for (const m of [dm, gm]) {
      expect(Object.keys(m).sort()).toEqual(DOCUMENTED)
      expect(m).not.toHaveProperty('muid')
    }
    expect(dm).toMatchObject({
      id: expect.any(String),
      conversationId: 'alice_user_bob',
      sender: 'alice',
      receiverType: 'user',
      receiver: 'bob',
      category: 'message',
      type: 'text',
      sentAt: now - 3,
      updatedAt: now - 3,
    })
    expect(dm.data).toMatchObject({ text: 'hi', metadata: { legacy: { id: 'L1' } } })
    expect(dm.data.entities.sender).toMatchObject({ entityType: 'user', entity: { uid: 'alice', name: expect.any(String) } })
    expect(dm.data.entities.receiver).toMatchObject({ entityType: 'user', entity: { uid: 'bob' } })
    expect(gm.data.entities.receiver).toMatchObject({ entityType: 'group', entity: { guid: 'g1', conversationId: 'group_g1' } })
    const one = await http(`${own.baseUrl}/messages/${dm.id}`, { headers: { apikey: own.apiKey } })
    expect(one.body.data).toEqual(dm)
    // The import answer, unlike the list, does show the muid (documented example).
    expect(sent.results.get('dm')).toMatchObject({ ok: true, data: { muid: 'dm' } })
  })
})
