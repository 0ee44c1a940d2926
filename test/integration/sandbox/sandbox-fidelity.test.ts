/**
 * Contract of the sandbox's published-behaviour defaults (issue 12), over real HTTP on a real
 * Postgres database: a bad message row fails the whole request with 500 after the good rows
 * landed, the 429 without headers carries its wait in the documented words, and the smaller
 * documented rules (message `data` extras, decimal attachment sizes, ERR_MESSAGE_ID_NOT_FOUND,
 * archived apps, the app limit, group and membership sizes). Each kinder behaviour is checked
 * behind its knob too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { DEFAULT_APP_SETTINGS } from '../../../src/sandbox/app-settings.ts'
import {
  http,
  importRaw,
  mgmtRaw,
  nowSeconds,
  seedGroup,
  seedUsers,
  startTestSandbox,
  type TestApp,
  type TestSandbox,
} from '../../helpers/sandbox.ts'

let t: TestSandbox

beforeAll(async () => {
  t = await startTestSandbox()
})
afterAll(async () => {
  await t?.close()
})

const text = (muid: string, extra: Record<string, unknown> = {}) => ({
  muid,
  sender: 'alice',
  receiverType: 'user',
  receiver: 'bob',
  category: 'message',
  type: 'text',
  data: { text: `hello ${muid}` },
  sentAt: nowSeconds() - 60,
  ...extra,
})

async function chatApp(settings?: Parameters<TestSandbox['app']>[0]): Promise<TestApp> {
  const app = await t.app(settings)
  await seedUsers(app, ['alice', 'bob'])
  await seedGroup(app, 'g1', 1_700_000_000)
  return app
}

async function storedMuids(app: TestApp): Promise<string[]> {
  const rows = await t.sandbox.store.selectFrom('messages').select('muid').where('app_id', '=', app.id).orderBy('muid').execute()
  return rows.map((r) => r.muid)
}

/** A body holding good rows and one bad row of each kind the platform refuses, plus one already imported. */
function mixedBody() {
  return {
    messages: {
      good1: text('good1'),
      old: text('old', { sentAt: nowSeconds() - 200 * 86_400 }),
      good2: text('good2', { receiverType: 'group', receiver: 'g1' }),
      empty: text('empty', { data: { text: '  ' } }),
      ghost: text('ghost', { sender: 'ghost' }),
      big: text('big', { data: { text: 'a'.repeat(10_241) } }),
      dup: text('dup'),
      good3: text('good3'),
    },
  }
}

describe('a bad message row (vendor migration guidance)', () => {
  it('by default: the good rows are written, then the whole request answers 500 ERR_EXCEPTION without per-item results', async () => {
    const app = await chatApp()
    expect((await importRaw(app, 'messages', { messages: { dup: text('dup') } })).status).toBe(200)
    const res = await importRaw(app, 'messages', mixedBody())
    expect(res.status).toBe(500)
    expect(res.body.error).toMatchObject({ code: 'ERR_EXCEPTION', source: 'sandbox' })
    expect(res.body.data).toBeUndefined()
    // Partial commit: every good row landed, no bad one did, the duplicate was not written twice.
    expect(await storedMuids(app)).toEqual(['dup', 'good1', 'good2', 'good3'])
    const log = await t.sandbox.requests(app.id)
    const last = log[log.length - 1]
    expect(last).toMatchObject({ status: 500, code: 'ERR_EXCEPTION', fault: null, committed: 3, itemCount: 8 })
    expect(Object.fromEntries((last?.items ?? []).map((i) => [i.key, i.code ?? i.result]))).toEqual({
      good1: 'created',
      old: 'ERR_BAD_REQUEST',
      good2: 'created',
      empty: 'ERR_EMPTY_MESSAGE_TEXT',
      ghost: 'ERR_UID_NOT_FOUND',
      big: 'ERR_INVALID_MESSAGE_DATA',
      dup: 'ERR_IMPORT_MUID_ALREADY_EXISTS',
      good3: 'created',
    })
    // A re-send of the same request is 500 again; the good rows are now "already exists", not twice.
    const again = await importRaw(app, 'messages', mixedBody())
    expect(again.status).toBe(500)
    expect(await storedMuids(app)).toEqual(['dup', 'good1', 'good2', 'good3'])
  })

  it('badRowCommit stop-at-bad-row (the stricter reading): only the good rows before the first bad row are written, then the 500', async () => {
    const app = await chatApp({ badRowCommit: 'stop-at-bad-row' })
    expect((await importRaw(app, 'messages', { messages: { dup: text('dup') } })).status).toBe(200)
    const res = await importRaw(app, 'messages', mixedBody())
    expect(res.status).toBe(500)
    expect(res.body.error).toMatchObject({ code: 'ERR_EXCEPTION' })
    // good1 comes before the first bad row (old); good2 and good3 after it are not written.
    expect(await storedMuids(app)).toEqual(['dup', 'good1'])
    const last = (await t.sandbox.requests(app.id)).at(-1)
    expect(last).toMatchObject({ status: 500, committed: 1, itemCount: 8 })
    expect(Object.fromEntries((last?.items ?? []).map((i) => [i.key, i.code ?? i.result]))).toMatchObject({
      good1: 'created',
      good2: 'unwritten',
      dup: 'ERR_IMPORT_MUID_ALREADY_EXISTS',
      good3: 'unwritten',
    })
    // Without a bad row, every row is written.
    expect((await importRaw(app, 'messages', { messages: { good2: text('good2'), good3: text('good3') } })).status).toBe(200)
    expect(await storedMuids(app)).toEqual(['dup', 'good1', 'good2', 'good3'])
  })

  it('"already exists" is not a bad row: a request of good and already-imported rows answers 200', async () => {
    const app = await chatApp()
    await importRaw(app, 'messages', { messages: { a: text('a') } })
    const res = await importRaw(app, 'messages', { messages: { a: text('a'), b: text('b') } })
    expect(res.status).toBe(200)
    expect(res.body.data.a.error.code).toBe('ERR_IMPORT_MUID_ALREADY_EXISTS')
    expect(res.body.data.b.success).toBe(true)
  })

  it('badRow500: [] is the kinder per-item answer: 200, each bad row with its code', async () => {
    const app = await chatApp({ badRow500: [] })
    await importRaw(app, 'messages', { messages: { dup: text('dup') } })
    const res = await importRaw(app, 'messages', mixedBody())
    expect(res.status).toBe(200)
    const codes = Object.fromEntries(Object.entries(res.body.data as Record<string, any>).map(([k, v]) => [k, v.success ? 'OK' : v.error.code]))
    expect(codes).toEqual({
      good1: 'OK',
      old: 'ERR_BAD_REQUEST',
      good2: 'OK',
      empty: 'ERR_EMPTY_MESSAGE_TEXT',
      ghost: 'ERR_UID_NOT_FOUND',
      big: 'ERR_INVALID_MESSAGE_DATA',
      dup: 'ERR_IMPORT_MUID_ALREADY_EXISTS',
      good3: 'OK',
    })
    expect(await storedMuids(app)).toEqual(['dup', 'good1', 'good2', 'good3'])
  })

  it('users, groups and members answer bad rows per item by default; badRow500 can name them too', async () => {
    const body = { users: { ok: { uid: 'ok', name: 'OK' }, bad: { uid: 'bad', name: 'n'.repeat(101) } } }
    const lax = await t.app()
    const perItem = await importRaw(lax, 'users', body)
    expect(perItem.status).toBe(200)
    expect(perItem.body.data.bad.error.code).toBe('ERR_BAD_REQUEST')
    const strict = await t.app({ badRow500: ['users', 'messages'] })
    const failed = await importRaw(strict, 'users', body)
    expect(failed.status).toBe(500)
    expect(failed.body.error.code).toBe('ERR_EXCEPTION')
    const rows = await t.sandbox.store.selectFrom('users').select('uid').where('app_id', '=', strict.id).execute()
    expect(rows.map((r) => r.uid)).toEqual(['ok'])
  })
})

describe('429 on the import endpoints (documented text; headers not promised)', () => {
  it('rateLimitHeaders: false: no X-RateLimit-* or Retry-After anywhere, the wait only in the documented words', async () => {
    const app = await t.app({ rateLimitHeaders: false, requestsPerMinute: 2, windowMs: 60_000 })
    const one = { users: { a: { uid: 'a', name: 'A' } } }
    for (let i = 0; i < 2; i++) {
      const ok = await importRaw(app, 'users', one)
      expect(ok.status).toBe(200)
      for (const h of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'retry-after']) {
        expect(ok.headers.get(h)).toBeNull()
      }
    }
    const over = await importRaw(app, 'users', one)
    expect(over.status).toBe(429)
    for (const h of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'retry-after']) {
      expect(over.headers.get(h)).toBeNull()
    }
    expect(over.body.error.code).toBe('ERR_TOO_MANY_REQUESTS')
    const m = /^Too many requests for data import API\. 2 per minute is the maximum request allowed\. Please retry for seconds after (\d+)\.$/.exec(
      over.body.error.message,
    )
    expect(m, over.body.error.message).not.toBeNull()
    const wait = Number(m?.[1])
    expect(wait).toBeGreaterThanOrEqual(58)
    expect(wait).toBeLessThanOrEqual(60)
    // The typed client sees it as retryable, with no wait from headers.
    const err = await app.client.importUsers([{ uid: 'b', name: 'B' }]).catch((e: unknown) => e)
    expect(err).toMatchObject({ status: 429, code: 'ERR_TOO_MANY_REQUESTS', retryable: true, retryAfterMs: undefined })
  })

  it('the extra429 fault says its one second in the text too', async () => {
    const app = await t.app({ rateLimitHeaders: false, faults: { extra429: 1, seed: 1 } })
    const res = await importRaw(app, 'users', { users: { a: { uid: 'a', name: 'A' } } })
    expect(res.status).toBe(429)
    expect(res.headers.get('retry-after')).toBeNull()
    expect(res.body.error.message).toMatch(/Please retry for seconds after 1\.$/)
  })

  it('rateLimitHeaders: true keeps the headers (and the documented text)', async () => {
    const app = await t.app({ rateLimitHeaders: true, requestsPerMinute: 1 })
    const ok = await importRaw(app, 'users', { users: { a: { uid: 'a', name: 'A' } } })
    expect(ok.headers.get('x-ratelimit-limit')).toBe('1')
    const over = await importRaw(app, 'users', { users: { b: { uid: 'b', name: 'B' } } })
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    expect(over.body.error.message).toMatch(/Please retry for seconds after \d+\.$/)
  })
})

describe('smaller documented rules', () => {
  it('message data takes additional properties, stored and listed as sent; a NUL in one is still refused', async () => {
    const app = await chatApp()
    const res = await importRaw(app, 'messages', { messages: { x: text('x', { data: { text: 'hi', custodata: { a: [1, 'b'] }, flag: true } }) } })
    expect(res.status).toBe(200)
    expect(res.body.data.x.success).toBe(true)
    const [m] = (await app.client.listMessages()).data
    expect(m?.data).toMatchObject({ text: 'hi', custodata: { a: [1, 'b'] }, flag: true })
    const nul = await importRaw(app, 'messages', { messages: { n: text('n', { data: { text: 'hi', extra: 'a\u0000b' } }) } })
    expect(nul.status).toBe(500)
    expect(await storedMuids(app)).toEqual(['x'])
  })

  it('attachment size is a string and may be decimal ("350.2", documented); a number or non-numeric text is refused', async () => {
    const app = await chatApp({ badRow500: [] })
    const withSize = (muid: string, size: unknown) =>
      text(muid, {
        type: 'file',
        data: { attachments: [{ url: 'https://files.example/a.pdf', name: 'a.pdf', mimeType: 'application/pdf', extension: 'pdf', size }] },
      })
    const res = await importRaw(app, 'messages', {
      messages: { dec: withSize('dec', '350.2'), int: withSize('int', '350'), num: withSize('num', 350), word: withSize('word', 'big') },
    })
    expect(res.body.data.dec.success).toBe(true)
    expect(res.body.data.int.success).toBe(true)
    expect(res.body.data.num.error).toMatchObject({ code: 'ERR_BAD_REQUEST', details: { 'data.attachments.0.size': [expect.any(String)] } })
    expect(res.body.data.word.error.code).toBe('ERR_BAD_REQUEST')
  })

  it('a message that does not exist is 404 ERR_MESSAGE_ID_NOT_FOUND', async () => {
    const app = await chatApp()
    const res = await http(`${app.baseUrl}/messages/999999`, { headers: { apikey: app.apiKey } })
    expect(res.status).toBe(404)
    expect(res.body.error.code).toBe('ERR_MESSAGE_ID_NOT_FOUND')
  })

  it('a group has at most maxMembersPerGroup members (ERR_NO_VACANCY) and a user is in at most maxGroupsPerUser groups', async () => {
    const defaults = await t.sandbox.settings((await t.app()).id)
    expect(defaults).toMatchObject({ maxMembersPerGroup: 100_000, maxGroupsPerUser: 2000 })
    const app = await t.app({ maxMembersPerGroup: 2, maxGroupsPerUser: 2, badRow500: [] })
    await seedUsers(app, ['a', 'b', 'c', 'd'])
    for (const g of ['g1', 'g2', 'g3']) {
      await seedGroup(app, g, 1_700_000_000)
    }
    const member = (guid: string, uid: string) => ({ [`${guid}_member_${uid}`]: { memberId: `${guid}_member_${uid}`, guid, uid } })
    // Within one request and across requests.
    const first = await importRaw(app, 'members', { members: { ...member('g1', 'a'), ...member('g1', 'b'), ...member('g1', 'c') } })
    expect(first.body.data.g1_member_c.error.code).toBe('ERR_NO_VACANCY')
    const again = await importRaw(app, 'members', { members: member('g1', 'd') })
    expect(again.body.data.g1_member_d.error.code).toBe('ERR_NO_VACANCY')
    const groups = await importRaw(app, 'members', { members: { ...member('g2', 'a'), ...member('g3', 'a') } })
    expect(groups.body.data.g2_member_a.success).toBe(true)
    expect(groups.body.data.g3_member_a.error).toMatchObject({ code: 'ERR_BAD_REQUEST', details: { uid: [expect.stringContaining('2 groups')] } })
  })

  it('DEFAULT_APP_SETTINGS: per-request 500 on messages, no rate-limit headers (as published)', () => {
    expect(DEFAULT_APP_SETTINGS.badRow500).toEqual(['messages'])
    expect(DEFAULT_APP_SETTINGS.rateLimitHeaders).toBe(false)
  })
})

describe('apps: archive and limit', () => {
  let s: TestSandbox
  beforeAll(async () => {
    s = await startTestSandbox({ maxApps: 2, archiveDays: 3 / 86_400 })
  })
  afterAll(async () => {
    await s?.close()
  })

  it('creation beyond maxApps is ERR_APP_CREATION_FAILED_MAX_LIMIT; a deleted app answers ERR_APP_ARCHIVED, then is removed', async () => {
    const create = (name: string) => mgmtRaw(s.sandbox, '/apps', { body: { name, region: 'us', version: '3' } })
    const a = await create('A')
    const b = await create('B')
    expect([a.status, b.status]).toEqual([200, 200])
    const c = await create('C')
    expect(c.status).toBe(403)
    expect(c.body.error).toMatchObject({
      code: 'ERR_APP_CREATION_FAILED_MAX_LIMIT',
      message: expect.stringContaining('maximum number of complimentary apps'),
    })
    const id: string = a.body.data.id
    const key = Object.values(a.body.data.apiKeys as Record<string, { apiKey: string; scope: string }>).find((k) => k.scope === 'fullAccess')
      ?.apiKey as string
    const deleted = await mgmtRaw(s.sandbox, `/apps/${id}`, { method: 'DELETE' })
    expect(deleted.status).toBe(200)
    // Archived: every call naming it says so; it no longer counts against the limit.
    const imp = await http(`${s.sandbox.url}/apps/${id}/v3/data_import/users`, {
      headers: { apikey: key },
      body: { users: { u: { uid: 'u', name: 'U' } } },
    })
    expect(imp.status).toBe(403)
    expect(imp.body.error.code).toBe('ERR_APP_ARCHIVED')
    const again = await mgmtRaw(s.sandbox, `/apps/${id}`, { method: 'DELETE' })
    expect(again.body.error.code).toBe('ERR_APP_ARCHIVED')
    expect((await create('C')).status).toBe(200)
    // After archiveDays it is gone: unknown everywhere, its rows removed from the store.
    await new Promise((r) => setTimeout(r, 4000))
    const gone = await http(`${s.sandbox.url}/apps/${id}/v3/users`, { headers: { apikey: key } })
    expect(gone.body.error.code).toBe('AUTH_ERR_INVALID_APPID')
    const deleteGone = await mgmtRaw(s.sandbox, `/apps/${id}`, { method: 'DELETE' })
    expect(deleteGone.status).toBe(404)
    expect(deleteGone.body.error.code).toBe('ERR_APP_NOT_FOUND')
    await mgmtRaw(s.sandbox, `/apps/${b.body.data.id}`, { method: 'DELETE' })
    const rows = await s.sandbox.store.selectFrom('apps').select('id').where('id', '=', id).execute()
    expect(rows).toEqual([])
    const keys = await s.sandbox.store.selectFrom('api_keys').select('app_id').where('app_id', '=', id).execute()
    expect(keys).toEqual([])
  })
})
