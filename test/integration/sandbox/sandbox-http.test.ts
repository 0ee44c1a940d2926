/**
 * Contract of the sandbox's HTTP surface: authentication, the data-import quota with its headers,
 * the chat quota, and every kind of bad input (each answered with the documented error body and a
 * 4xx, writing nothing).
 */
import { request } from 'node:http'
import type { AddressInfo } from 'node:net'

import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { createRouter } from '../../../src/sandbox/router.ts'
import { createSandboxServer } from '../../../src/sandbox/server.ts'
import { createPlatformClient } from '../../../src/target/client.ts'
import { PlatformError } from '../../../src/target/errors.ts'
import { http, importRaw, mgmtRaw, startTestSandbox, type TestApp, type TestSandbox } from '../../helpers/sandbox.ts'

let t: TestSandbox

beforeAll(async () => {
  t = await startTestSandbox({ maxBodyBytes: 256 * 1024 })
})
afterAll(async () => {
  await t?.close()
})

function expectErrorShape(body: any, code: string) {
  expect(body).toEqual({
    error: {
      message: expect.any(String),
      devMessage: expect.any(String),
      source: 'sandbox',
      code,
      ...(body.error.details ? { details: body.error.details } : {}),
    },
  })
}

async function userCount(app: TestApp): Promise<number> {
  const r = await t.sandbox.store
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('app_id', '=', app.id)
    .executeTakeFirstOrThrow()
  return Number(r.n)
}

const oneUser = { users: { a: { uid: 'a', name: 'A' } } }

describe('app authentication', () => {
  it('a missing apikey is 401 AUTH_ERR_EMPTY_APIKEY', async () => {
    const app = await t.app()
    const res = await http(`${app.baseUrl}/data_import/users`, { body: oneUser })
    expect(res.status).toBe(401)
    expectErrorShape(res.body, 'AUTH_ERR_EMPTY_APIKEY')
  })

  it('an unknown apikey is 401 AUTH_ERR_APIKEY_NOT_FOUND (header names are case-insensitive)', async () => {
    const app = await t.app()
    const res = await http(`${app.baseUrl}/users`, { headers: { APIKEY: 'nope' } })
    expect(res.status).toBe(401)
    expectErrorShape(res.body, 'AUTH_ERR_APIKEY_NOT_FOUND')
    const ok = await http(`${app.baseUrl}/users`, { headers: { ApiKey: app.apiKey } })
    expect(ok.status).toBe(200)
  })

  it('the key of app A on app B is AUTH_ERR_APIKEY_NOT_FOUND', async () => {
    const a = await t.app()
    const b = await t.app()
    const res = await http(`${b.baseUrl}/users`, { headers: { apikey: a.apiKey } })
    expect(res.status).toBe(401)
    expect(res.body.error.code).toBe('AUTH_ERR_APIKEY_NOT_FOUND')
  })

  it('an authOnly key is 403 AUTH_ERR_NO_ACCESS on import and lists', async () => {
    const app = await t.app()
    const imp = await importRaw({ ...app, apiKey: app.authKey }, 'users', oneUser)
    expect(imp.status).toBe(403)
    expect(imp.body.error.code).toBe('AUTH_ERR_NO_ACCESS')
    const list = await http(`${app.baseUrl}/users`, { headers: { apikey: app.authKey } })
    expect(list.status).toBe(403)
    expect(await userCount(app)).toBe(0)
  })

  it('an unknown app id is 401 AUTH_ERR_INVALID_APPID', async () => {
    const app = await t.app()
    const res = await http(`${t.sandbox.url}/apps/nosuchapp/v3/users`, { headers: { apikey: app.apiKey } })
    expect(res.status).toBe(401)
    expect(res.body.error.code).toBe('AUTH_ERR_INVALID_APPID')
  })

  it('the client reports auth failures as non-retryable PlatformErrors', async () => {
    const app = await t.app()
    const client = createPlatformClient({ baseUrl: app.baseUrl, apiKey: 'wrong' })
    const err = await client.importUsers([{ uid: 'a', name: 'A' }]).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(PlatformError)
    expect(err).toMatchObject({ status: 401, code: 'AUTH_ERR_APIKEY_NOT_FOUND', retryable: false })
  })
})

describe('data-import quota', () => {
  // The tests that read rate-limit headers ask for them (`rateLimitHeaders: true`): the data-import
  // documentation promises none, and the header-less mode is tested in sandbox-fidelity.test.ts.
  it('the 60th request passes, the 61st is 429 with Retry-After; headers on every response; 429s are not counted', async () => {
    const app = await t.app({ rateLimitHeaders: true })
    const started = Math.floor(Date.now() / 1000)
    for (let i = 1; i <= 60; i++) {
      const res = await importRaw(app, 'users', { users: { [`u${i}`]: { uid: `u${i}`, name: 'U' } } })
      expect(res.status).toBe(200)
      expect(res.headers.get('x-ratelimit-limit')).toBe('60')
      expect(res.headers.get('x-ratelimit-remaining')).toBe(String(60 - i))
      const reset = Number(res.headers.get('x-ratelimit-reset'))
      expect(reset).toBeGreaterThanOrEqual(started + 59)
      expect(reset).toBeLessThanOrEqual(started + 62)
    }
    const over = await importRaw(app, 'users', { users: { late: { uid: 'late', name: 'L' } } })
    expect(over.status).toBe(429)
    expectErrorShape(over.body, 'ERR_TOO_MANY_REQUESTS')
    expect(over.body.error.message).toMatch(
      /^Too many requests for data import API\. 60 per minute is the maximum request allowed\. Please retry for seconds after \d+\.$/,
    )
    const retryAfter = Number(over.headers.get('retry-after'))
    expect(retryAfter).toBeGreaterThanOrEqual(1)
    expect(retryAfter).toBeLessThanOrEqual(60)
    expect(over.headers.get('x-ratelimit-remaining')).toBe('0')
    expect(await userCount(app)).toBe(60)
    // The four endpoints share the budget (gap 4, stricter).
    const groups = await importRaw(app, 'groups', { groups: { g: { guid: 'g', name: 'G', type: 'public' } } })
    expect(groups.status).toBe(429)
    const log = await t.sandbox.requests(app.id)
    expect(log.filter((e) => e.status === 429)).toHaveLength(2)
    expect(log.filter((e) => e.status === 200)).toHaveLength(60)
  })

  it('the window is a sliding window (windowMs knob): a slot frees when the oldest request leaves it', async () => {
    const app = await t.app({ requestsPerMinute: 2, windowMs: 1000, rateLimitHeaders: true })
    expect((await importRaw(app, 'users', oneUser)).status).toBe(200)
    expect((await importRaw(app, 'users', oneUser)).status).toBe(200)
    const refused = await importRaw(app, 'users', oneUser)
    expect(refused.status).toBe(429)
    expect(refused.headers.get('retry-after')).toBe('1')
    await new Promise((r) => setTimeout(r, 1100))
    expect((await importRaw(app, 'users', oneUser)).status).toBe(200)
  })

  it('the client sees the 429 as retryable with retryAfterMs', async () => {
    const app = await t.app({ requestsPerMinute: 1, rateLimitHeaders: true })
    await app.client.importUsers([{ uid: 'a', name: 'A' }])
    const err = await app.client.importUsers([{ uid: 'b', name: 'B' }]).catch((e: unknown) => e)
    expect(err).toMatchObject({ status: 429, code: 'ERR_TOO_MANY_REQUESTS', retryable: true })
    expect((err as PlatformError).retryAfterMs).toBeGreaterThanOrEqual(1000)
  })

  it('the chat lists have their own budget (chatRequestsPerMinute)', async () => {
    const app = await t.app({ chatRequestsPerMinute: 2, requestsPerMinute: 1 })
    expect((await importRaw(app, 'users', oneUser)).status).toBe(200)
    await app.client.listUsers()
    await app.client.listGroups()
    const err = await app.client.listUsers().catch((e: unknown) => e)
    expect(err).toMatchObject({ status: 429, code: 'ERR_TOO_MANY_REQUESTS' })
  })

  it('itemsPerRequest is a knob', async () => {
    const app = await t.app({ itemsPerRequest: 2 })
    const res = await importRaw(app, 'users', { users: { a: { uid: 'a', name: 'A' }, b: { uid: 'b', name: 'B' }, c: { uid: 'c', name: 'C' } } })
    expect(res.status).toBe(400)
    expect(res.body.error.code).toBe('ERR_BAD_REQUEST')
  })
})

describe('bad input', () => {
  it('malformed JSON is 400 ERR_BAD_REQUEST, nothing written, rate-limit headers present', async () => {
    const app = await t.app({ rateLimitHeaders: true })
    const res = await http(`${app.baseUrl}/data_import/users`, {
      headers: { apikey: app.apiKey, 'content-type': 'application/json' },
      body: '{"users": {"a": ',
    })
    expect(res.status).toBe(400)
    expectErrorShape(res.body, 'ERR_BAD_REQUEST')
    expect(res.headers.get('x-ratelimit-limit')).toBe('60')
    expect(await userCount(app)).toBe(0)
  })

  it('a body that is not a JSON object is 400', async () => {
    const app = await t.app()
    const res = await importRaw(app, 'users', [1, 2])
    expect(res.status).toBe(400)
    expect(res.body.error.code).toBe('ERR_BAD_REQUEST')
  })

  it('a non-JSON content type is 415 ERR_BAD_REQUEST', async () => {
    const app = await t.app()
    const res = await http(`${app.baseUrl}/data_import/users`, {
      headers: { apikey: app.apiKey, 'content-type': 'text/plain' },
      body: JSON.stringify(oneUser),
    })
    expect(res.status).toBe(415)
    expectErrorShape(res.body, 'ERR_BAD_REQUEST')
    expect(await userCount(app)).toBe(0)
  })

  it('a body over the cap is 413 and reading stops', async () => {
    const app = await t.app()
    const big = JSON.stringify({ users: { a: { uid: 'a', name: 'x'.repeat(300 * 1024) } } })
    // Declared length over the cap: refused before reading.
    const declared = await http(`${app.baseUrl}/data_import/users`, {
      headers: { apikey: app.apiKey, 'content-type': 'application/json' },
      body: big,
    })
    expect(declared.status).toBe(413)
    expectErrorShape(declared.body, 'ERR_BAD_REQUEST')
    // Chunked, no declared length: refused when the cap is crossed.
    const status = await new Promise<number>((resolve, reject) => {
      const url = new URL(`${app.baseUrl}/data_import/users`)
      const req = request(
        url,
        { method: 'POST', headers: { apikey: app.apiKey, 'content-type': 'application/json', 'transfer-encoding': 'chunked' } },
        (res) => {
          res.resume()
          resolve(res.statusCode ?? 0)
        },
      )
      req.on('error', reject)
      const chunk = 'x'.repeat(64 * 1024)
      let sent = 0
      const pump = () => {
        while (sent < 64) {
          sent++
          if (!req.write(chunk)) {
            req.once('drain', pump)
            return
          }
        }
        req.end()
      }
      pump()
    })
    expect(status).toBe(413)
    expect(await userCount(app)).toBe(0)
    // The server is still fine.
    expect((await importRaw(app, 'users', oneUser)).status).toBe(200)
  })

  it('an unknown path is 404 ERR_API_NOT_FOUND', async () => {
    const app = await t.app()
    for (const path of ['/nope', `/apps/${app.id}/v3/nope`, `/apps/${app.id}/v4/users`, `/apps/${app.id}/v3/data_import/reactions`]) {
      const res = await http(`${t.sandbox.url}${path}`, { headers: { apikey: app.apiKey } })
      expect(res.status).toBe(404)
      expectErrorShape(res.body, 'ERR_API_NOT_FOUND')
    }
  })

  it('a wrong method on a known path is 405 ERR_API_NOT_FOUND with Allow', async () => {
    const app = await t.app()
    const get = await http(`${app.baseUrl}/data_import/users`, { headers: { apikey: app.apiKey } })
    expect(get.status).toBe(405)
    expect(get.headers.get('allow')).toBe('POST')
    expectErrorShape(get.body, 'ERR_API_NOT_FOUND')
    // DELETE /users (deactivation) and PUT /users/{uid} exist since the chat writes; POST /users/{uid} does not.
    const post = await http(`${app.baseUrl}/users/someone`, { method: 'POST', headers: { apikey: app.apiKey } })
    expect(post.status).toBe(405)
    expect(post.headers.get('allow')).toBe('GET, PUT')
  })

  it('an item that is not an object is refused per item', async () => {
    const app = await t.app()
    const res = await importRaw(app, 'users', { users: { a: 'x', b: { uid: 'b', name: 'B' } } })
    expect(res.status).toBe(200)
    expect(res.body.data.a.error.code).toBe('ERR_BAD_REQUEST')
    expect(res.body.data.b.success).toBe(true)
  })

  it('an uncaught handler error is 500 ERR_EXCEPTION and the server keeps running', async () => {
    const router = createRouter([
      { method: 'GET', pattern: '/boom', handler: async () => Promise.reject(new Error('kaboom')) },
      { method: 'GET', pattern: '/fine', handler: async () => ({ status: 200, body: { data: 'ok' } }) },
    ])
    const server = createSandboxServer({ router, logger: pino({ level: 'silent' }), maxBodyBytes: 1024 })
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    try {
      const boom = await http(`${url}/boom`)
      expect(boom.status).toBe(500)
      expectErrorShape(boom.body, 'ERR_EXCEPTION')
      expect((await http(`${url}/fine`)).body).toEqual({ data: 'ok' })
    } finally {
      server.closeAllConnections()
      await new Promise((r) => server.close(r))
    }
  })

  it('the sandbox keeps answering after all of that', async () => {
    const app = await t.app()
    expect((await importRaw(app, 'users', oneUser)).status).toBe(200)
    expect((await mgmtRaw(t.sandbox, '/apps')).status).toBe(200)
  })
})
