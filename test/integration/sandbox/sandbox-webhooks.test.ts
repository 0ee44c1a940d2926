/**
 * Contract of the sandbox's webhook management as the platform publishes it (facts i12 §4), over
 * real HTTP: the version header (legacy vs 2), the triggers sub-resource, the field rules, the
 * answers, retryOnFailure timing with shortened delays, the 2 s answer limit, and the typed client
 * refusing bad input before any request (the sandbox's request log shows none arrived).
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { createManagementClient } from '../../../src/target/client.ts'
import { WEBHOOK_TRIGGERS, WebhookEnvelope, WebhookInputError } from '../../../src/target/webhooks.ts'
import { mgmtRaw, nowSeconds, seedUsers, startTestSandbox, type TestApp, type TestSandbox } from '../../helpers/sandbox.ts'
import { testSecret } from '../../helpers/secrets.ts'

let t: TestSandbox
let receiver: Server
let base: string
/** Per path: the arrival times of the requests, and how many failures are left before a 200. */
const arrivals = new Map<string, number[]>()
const failuresLeft = new Map<string, number>()

beforeAll(async () => {
  t = await startTestSandbox()
  // /fail/*: 500 while failuresLeft > 0 (forever when unset), then 200; /slow/<ms>/*: answers 200 after <ms>.
  receiver = createServer((req, res) => {
    const path = req.url ?? '/'
    req.resume()
    req.on('end', () => {
      arrivals.set(path, [...(arrivals.get(path) ?? []), Date.now()])
      const slow = /^\/slow\/(\d+)\//.exec(path)
      if (slow) {
        setTimeout(() => res.writeHead(200).end(), Number(slow[1]))
        return
      }
      if (path.startsWith('/fail/')) {
        const left = failuresLeft.get(path) ?? Infinity
        if (left > 0) {
          failuresLeft.set(path, left - 1)
          res.writeHead(500).end()
          return
        }
      }
      res.writeHead(200).end()
    })
  })
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r))
  base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`
})
afterAll(async () => {
  await t?.close()
  receiver?.closeAllConnections()
  await new Promise((r) => receiver?.close(r))
})

const V2 = { 'x-webhook-version': '2' }
const hooks = (app: TestApp, rest = '') => `/apps/${app.id}/webhooks${rest}`

/** Imports one direct message so every webhook with `message_sent` gets one delivery. */
async function sendOneMessage(app: TestApp): Promise<void> {
  await seedUsers(app, ['a', 'b'])
  const res = await app.client.importMessages([
    { muid: 'm1', sender: 'a', receiverType: 'user', receiver: 'b', data: { text: 'hi' }, sentAt: nowSeconds() - 1 },
  ])
  expect(res.results.get('m1')?.ok).toBe(true)
  await t.sandbox.whenIdle()
}

describe('X-Webhook-Version', () => {
  it('without the header a webhook is legacy; with "2" it is the new implementation; anything else is refused', async () => {
    const app = await t.app()
    const legacy = await mgmtRaw(t.sandbox, hooks(app), { body: { id: 'old', name: 'Old', webhookURL: 'https://e.com/a' } })
    expect(legacy.status).toBe(200)
    // The published create example is an array: [{"data": {…}}].
    expect(legacy.body).toEqual([
      {
        data: {
          id: 'old',
          name: 'Old',
          webhookURL: 'https://e.com/a',
          enabled: true,
          version: 'legacy',
          createdAt: expect.any(Number),
          updatedAt: expect.any(Number),
        },
      },
    ])
    const v2 = await mgmtRaw(t.sandbox, hooks(app), { body: { id: 'new', name: 'New', webhookURL: 'https://e.com/b' }, headers: V2 })
    expect(v2.body[0].data.version).toBe('2')
    const bad = await mgmtRaw(t.sandbox, hooks(app), {
      body: { id: 'x', name: 'X', webhookURL: 'https://e.com/c' },
      headers: { 'x-webhook-version': '3' },
    })
    expect(bad.status).toBe(400)
    expect(bad.body.error.code).toBe('ERR_BAD_REQUEST')
    const rows = await t.sandbox.store.selectFrom('webhooks').select(['id', 'version']).where('app_id', '=', app.id).orderBy('seq').execute()
    expect(rows).toEqual([
      { id: 'old', version: 'legacy' },
      { id: 'new', version: '2' },
    ])
    // An update with the header does not convert a legacy webhook.
    await mgmtRaw(t.sandbox, hooks(app, '/old'), { method: 'PUT', body: { name: 'Still old' }, headers: V2 })
    const got = await mgmtRaw(t.sandbox, hooks(app, '/old'))
    expect(got.body).toEqual({ data: [{ data: expect.objectContaining({ id: 'old', name: 'Still old', version: 'legacy' }) }] })
  })

  it('the client creates v2 webhooks', async () => {
    const app = await t.app()
    const created = await t.mgmt.createWebhook(app.id, { id: 'viaclient', name: 'C', webhookURL: 'https://e.com' })
    expect(created.version).toBe('2')
    expect((await t.mgmt.getWebhook(app.id, 'viaclient')).version).toBe('2')
  })

  it('the client sends X-Webhook-Version: 2 on every webhook operation, with the documented methods and paths', async () => {
    const seen: string[] = []
    const hook = { id: 'h', name: 'H', webhookURL: 'https://e.com', enabled: true }
    const capture = createServer((req, res) => {
      req.resume()
      req.on('end', () => {
        seen.push(`${req.method} ${req.url} v=${String(req.headers['x-webhook-version'])}`)
        const url = req.url ?? ''
        const body = url.endsWith('/triggers')
          ? req.method === 'POST'
            ? { data: { message_sent: { success: true } } }
            : req.method === 'GET'
              ? { data: [{ id: 'message_sent' }] }
              : { data: { success: true } }
          : req.method === 'DELETE'
            ? { data: { success: true } }
            : req.method === 'GET' && url.includes('/webhooks?')
              ? { data: [hook] }
              : { data: hook }
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body))
      })
    })
    await new Promise<void>((r) => capture.listen(0, '127.0.0.1', r))
    try {
      const c = createManagementClient({ url: `http://127.0.0.1:${(capture.address() as AddressInfo).port}`, key: 'k', secret: 's' })
      await c.listWebhooks('app1', { perPage: 5 })
      await c.getWebhook('app1', 'h')
      await c.createWebhook('app1', { id: 'h', name: 'H', webhookURL: 'https://e.com' })
      await c.updateWebhook('app1', 'h', { enabled: false })
      await c.deleteWebhook('app1', 'h')
      await c.addWebhookTriggers('app1', 'h', ['message_sent'])
      await c.listWebhookTriggers('app1', 'h')
      await c.removeWebhookTriggers('app1', 'h', ['message_sent'])
    } finally {
      capture.closeAllConnections()
      await new Promise((r) => capture.close(r))
    }
    expect(seen).toEqual([
      'GET /apps/app1/webhooks?perPage=5 v=2',
      'GET /apps/app1/webhooks/h v=2',
      'POST /apps/app1/webhooks v=2',
      'PUT /apps/app1/webhooks/h v=2',
      'DELETE /apps/app1/webhooks/h v=2',
      'POST /apps/app1/webhooks/h/triggers v=2',
      'GET /apps/app1/webhooks/h/triggers v=2',
      'DELETE /apps/app1/webhooks/h/triggers v=2',
    ])
  })
})

describe('answers', () => {
  it('list pages with perPage/page, searches names with searchKey, and carries meta.pagination; delete answers the documented message', async () => {
    const app = await t.app()
    for (const [id, name] of [
      ['one', 'Alpha'],
      ['two', 'Beta'],
      ['three', 'alphabet'],
    ]) {
      await t.mgmt.createWebhook(app.id, { id: id as string, name: name as string, webhookURL: 'https://e.com' })
    }
    const page = await mgmtRaw(t.sandbox, hooks(app, '?perPage=2&page=2'), { headers: V2 })
    expect(page.body.data.map((w: { id: string }) => w.id)).toEqual(['three'])
    expect(page.body.meta.pagination).toEqual({ total: 3, count: 1, per_page: 2, current_page: 2, total_pages: 2 })
    expect((await t.mgmt.listWebhooks(app.id, { searchKey: 'ALPHA' })).map((w) => w.id)).toEqual(['one', 'three'])
    expect((await mgmtRaw(t.sandbox, hooks(app, '?perPage=1001'))).status).toBe(400)
    const del = await mgmtRaw(t.sandbox, hooks(app, '/two'), { method: 'DELETE', headers: V2 })
    expect(del.body).toEqual({ data: { success: true, message: 'Deleted Webhook successfully.' } })
    const again = await mgmtRaw(t.sandbox, hooks(app, '/two'), { method: 'DELETE', headers: V2 })
    expect(again.status).toBe(404)
    expect(again.body.error.code).toBe('ERR_WEBHOOK_NOT_FOUND')
  })

  it('update takes the documented fields but id; retryOnFailure and the credentials are stored, never answered', async () => {
    const app = await t.app()
    await t.mgmt.createWebhook(app.id, { id: 'upd', name: 'U', webhookURL: 'https://e.com' })
    const withId = await mgmtRaw(t.sandbox, hooks(app, '/upd'), { method: 'PUT', body: { id: 'upd', name: 'V' }, headers: V2 })
    expect(withId.status).toBe(400)
    expect(withId.body.error.details).toHaveProperty('id')
    const basicWithout = await mgmtRaw(t.sandbox, hooks(app, '/upd'), { method: 'PUT', body: { useBasicAuth: true }, headers: V2 })
    expect(basicWithout.status).toBe(400)
    expect(Object.keys(basicWithout.body.error.details).sort()).toEqual(['password', 'username'])
    const updated = await t.mgmt.updateWebhook(app.id, 'upd', { retryOnFailure: true, useBasicAuth: true, username: 'user1', password: 'Pass1234' })
    expect(updated).toMatchObject({ id: 'upd', name: 'U' })
    expect(JSON.stringify(updated)).not.toContain('Pass1234')
    const row = await t.sandbox.store
      .selectFrom('webhooks')
      .selectAll()
      .where('app_id', '=', app.id)
      .where('id', '=', 'upd')
      .executeTakeFirstOrThrow()
    expect(row).toMatchObject({ retry_on_failure: true, use_basic_auth: true, username: 'user1', password: 'Pass1234' })
    expect(Number(row.updated_at)).toBeGreaterThanOrEqual(Number(row.created_at))
  })
})

describe('field rules', () => {
  it("id ≤ 50 and alphanumeric (the docs example's _ allowed), username ≤ 50 and password ≤ 100 alphanumeric, no spaces; name ≤ 50; URL ≤ 255", async () => {
    const app = await t.app()
    const post = (body: Record<string, unknown>) =>
      mgmtRaw(t.sandbox, hooks(app), { body: { name: 'N', webhookURL: 'https://e.com', ...body }, headers: V2 })
    const refusedOn = async (body: Record<string, unknown>, field: string) => {
      const res = await post(body)
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400)
      expect(res.body.error.code).toBe('ERR_BAD_REQUEST')
      expect(Object.keys(res.body.error.details)).toContain(field)
      return res
    }
    await refusedOn({ id: 'has space' }, 'id')
    await refusedOn({ id: 'has-hyphen' }, 'id')
    await refusedOn({ id: 'é' }, 'id')
    await refusedOn({ id: 'i'.repeat(51) }, 'id')
    await refusedOn({ id: 'n1', name: 'n'.repeat(51) }, 'name')
    await refusedOn({ id: 'u1', useBasicAuth: true, username: 'u'.repeat(51), password: 'p' }, 'username')
    await refusedOn({ id: 'u2', useBasicAuth: true, username: 'a b', password: 'p' }, 'username')
    await refusedOn({ id: 'p1', useBasicAuth: true, username: 'u', password: 'p'.repeat(101) }, 'password')
    const secret = testSecret('webhookpassword')
    const leaked = await refusedOn({ id: 'p2', useBasicAuth: true, username: 'u', password: secret }, 'password')
    expect(JSON.stringify(leaked.body), 'a refused password is never repeated').not.toContain(secret)
    await refusedOn({ id: 'p3', useBasicAuth: true, username: 'u', password: 'with space' }, 'password')
    await refusedOn({ id: 'url1', webhookURL: `https://e.com/${'p'.repeat(256 - 14)}` }, 'webhookURL')
    await refusedOn({ id: 'url2', webhookURL: 'ftp://e.com/x' }, 'webhookURL')
    await refusedOn({ id: 'tr', triggers: ['message_sent'] }, 'triggers')
    expect((await post({ id: 'test_webhook201' })).status).toBe(200)
    expect((await post({ id: 'i'.repeat(50), useBasicAuth: true, username: 'u'.repeat(50), password: 'P4'.repeat(50) })).status).toBe(200)
    expect((await post({ id: 'retry', retryOnFailure: true })).status).toBe(200)
    const stored = await t.sandbox.store.selectFrom('webhooks').select('id').where('app_id', '=', app.id).execute()
    expect(stored.map((r) => r.id).sort()).toEqual(['i'.repeat(50), 'retry', 'test_webhook201'])
  })

  it('the 25th webhook is accepted, the 26th refused; deleting one makes room', async () => {
    const app = await t.app()
    for (let i = 1; i <= 25; i++) {
      expect((await mgmtRaw(t.sandbox, hooks(app), { body: { id: `w${i}`, name: 'W', webhookURL: 'https://e.com' }, headers: V2 })).status).toBe(200)
    }
    const over = await mgmtRaw(t.sandbox, hooks(app), { body: { id: 'w26', name: 'W', webhookURL: 'https://e.com' }, headers: V2 })
    expect(over.status).toBe(400)
    expect(over.body.error.message).toMatch(/at most 25/)
    await t.mgmt.deleteWebhook(app.id, 'w1')
    expect((await mgmtRaw(t.sandbox, hooks(app), { body: { id: 'w26', name: 'W', webhookURL: 'https://e.com' }, headers: V2 })).status).toBe(200)
  })
})

describe('triggers sub-resource', () => {
  it('add, list, add again, remove; an unknown id fails alone, ids not added are refused (ERR_TRIGGER_NOT_FOUND); the header-less call does not find a version-2 webhook', async () => {
    const app = await t.app()
    await t.mgmt.createWebhook(app.id, { id: 'trg', name: 'T', webhookURL: 'https://e.com' })
    const path = hooks(app, '/trg/triggers')
    const added = await mgmtRaw(t.sandbox, path, { body: { triggerIds: ['message_sent', 'group_created'] }, headers: V2 })
    expect(added.body).toEqual({
      data: {
        message_sent: { success: true, message: 'Triggers has been added successfully.' },
        group_created: { success: true, message: 'Triggers has been added successfully.' },
      },
    })
    const list = await mgmtRaw(t.sandbox, path, { headers: V2 })
    expect(list.body.data).toEqual([
      { id: 'message_sent', description: expect.any(String) },
      { id: 'group_created', description: expect.any(String) },
    ])
    expect(list.body.meta.pagination).toMatchObject({ total: 2, count: 2 })
    const again = await t.mgmt.addWebhookTriggers(app.id, 'trg', ['message_sent', 'message_edited'])
    expect(again.get('message_sent')).toMatchObject({ success: false, code: 'ERR_BAD_REQUEST' })
    expect(again.get('message_edited')).toMatchObject({ success: true })

    // Per trigger, as published: the unknown id fails alone, the known one is added.
    const unknown = await mgmtRaw(t.sandbox, path, { body: { triggerIds: ['message_deleted', 'message_exploded'] }, headers: V2 })
    expect(unknown.status).toBe(200)
    expect(unknown.body.data.message_exploded).toMatchObject({ success: false, error: { code: 'ERR_TRIGGER_NOT_FOUND' } })
    expect(unknown.body.data.message_deleted).toMatchObject({ success: true })
    // Without the version header the call addresses the legacy webhooks: this version-2 one is not found.
    const legacy = await mgmtRaw(t.sandbox, path, { body: { triggerIds: ['call_busy'] } })
    expect(legacy.status).toBe(404)
    expect(legacy.body.error.code).toBe('ERR_WEBHOOK_NOT_FOUND')
    const notAdded = await mgmtRaw(t.sandbox, path, { method: 'DELETE', body: { triggerIds: ['group_created', 'call_busy'] }, headers: V2 })
    expect(notAdded.status).toBe(404)
    expect(notAdded.body.error.code).toBe('ERR_TRIGGER_NOT_FOUND')
    expect((await t.mgmt.listWebhookTriggers(app.id, 'trg')).map((x) => x.id)).toEqual([
      'message_sent',
      'group_created',
      'message_edited',
      'message_deleted',
    ])

    const removed = await mgmtRaw(t.sandbox, path, { method: 'DELETE', body: { triggerIds: ['group_created'] }, headers: V2 })
    expect(removed.body).toEqual({ data: { success: true, message: 'Removed trigger successfully.' } })
    expect((await t.mgmt.listWebhookTriggers(app.id, 'trg')).map((x) => x.id)).toEqual(['message_sent', 'message_edited', 'message_deleted'])
    expect((await mgmtRaw(t.sandbox, path, { body: { triggerIds: [] }, headers: V2 })).status).toBe(400)
    expect((await mgmtRaw(t.sandbox, hooks(app, '/nope/triggers'), { headers: V2 })).body.error.code).toBe('ERR_WEBHOOK_NOT_FOUND')
  })

  it('knows every documented trigger id (52) and nothing else', async () => {
    expect(WEBHOOK_TRIGGERS).toHaveLength(52)
    expect(new Set(WEBHOOK_TRIGGERS).size).toBe(52)
    const app = await t.app()
    await t.mgmt.createWebhook(app.id, { id: 'all', name: 'A', webhookURL: 'https://e.com' })
    const res = await mgmtRaw(t.sandbox, hooks(app, '/all/triggers'), { body: { triggerIds: WEBHOOK_TRIGGERS }, headers: V2 })
    expect(Object.values(res.body.data).every((r) => (r as { success: boolean }).success)).toBe(true)
    expect((await t.mgmt.listWebhookTriggers(app.id, 'all')).map((x) => x.id).sort()).toEqual([...WEBHOOK_TRIGGERS].sort())
    for (const id of ['transcription_generated', 'after_feed_item_read', 'moderation_engine_failed', 'user_mentioned', 'call_unanswered']) {
      expect(WEBHOOK_TRIGGERS).toContain(id)
    }
  })

  it('deleting a webhook deletes its triggers', async () => {
    const app = await t.app()
    await t.mgmt.createWebhook(app.id, { id: 'gone', name: 'G', webhookURL: 'https://e.com' })
    await t.mgmt.addWebhookTriggers(app.id, 'gone', ['message_sent'])
    await t.mgmt.deleteWebhook(app.id, 'gone')
    const rows = await t.sandbox.store.selectFrom('webhook_triggers').selectAll().where('app_id', '=', app.id).execute()
    expect(rows).toEqual([])
  })
})

describe('delivery', () => {
  it("envelopes have the documented shape: {trigger, data, appId, region, webhook} with each trigger's data", async () => {
    const app = await t.app({ webhooksOnImport: true })
    await t.mgmt.createWebhook(app.id, { id: 'shape', name: 'S', webhookURL: `${base}/ok/shape` })
    await t.mgmt.addWebhookTriggers(app.id, 'shape', ['group_created', 'group_member_added', 'message_sent'])
    await seedUsers(app, ['owner', 'bob'])
    await app.client.importGroups([{ guid: 'g1', name: 'G', type: 'public', owner: 'owner', createdAt: 1_700_000_000 }])
    await app.client.importMembers([{ memberId: 'g1_member_bob', guid: 'g1', uid: 'bob', scope: 'participant', joinedAt: 1_700_000_001 }])
    await app.client.importMessages([
      { muid: 'm1', sender: 'bob', receiverType: 'group', receiver: 'g1', data: { text: 'hello' }, sentAt: nowSeconds() - 5 },
    ])
    await t.sandbox.whenIdle()
    const log = await t.sandbox.deliveries(app.id)
    expect(log.map((d) => d.trigger).sort()).toEqual(['group_created', 'group_member_added', 'message_sent'])
    for (const d of log) {
      const parsed = WebhookEnvelope.safeParse(d.payload)
      expect(parsed.success, `${d.trigger}: ${JSON.stringify(parsed.error?.issues ?? [])}`).toBe(true)
    }
    // The schema can fail: a message_sent without its entities is not the documented shape.
    const sent = log.find((d) => d.trigger === 'message_sent')?.payload as { data: { message: { data: Record<string, unknown> } } }
    const broken = structuredClone(sent)
    delete broken.data.message.data.entities
    expect(WebhookEnvelope.safeParse(broken).success).toBe(false)
  })

  it('retryOnFailure: a failing receiver is retried after each configured delay (10 s / 30 s by default), then given up', async () => {
    expect((await mgmtRaw(t.sandbox, `/sandbox/apps/${(await t.app()).id}/settings`)).body.data).toMatchObject({
      webhookRetryDelaysMs: [10_000, 30_000],
      webhookTimeoutMs: 2_000,
    })
    const app = await t.app({ webhooksOnImport: true, webhookRetryDelaysMs: [300, 900] })
    const url = `${base}/fail/retry-${app.id}`
    await t.mgmt.createWebhook(app.id, { id: 'retry', name: 'R', webhookURL: url, retryOnFailure: true })
    await t.mgmt.addWebhookTriggers(app.id, 'retry', ['message_sent'])
    await sendOneMessage(app)
    const [d] = await t.sandbox.deliveries(app.id)
    expect(d).toMatchObject({ status: 'failed', attempts: 3, httpStatus: 500, lastError: 'HTTP 500' })
    const at = d?.attemptsAtMs ?? []
    expect(at).toHaveLength(3)
    const gaps = [at[1]! - at[0]!, at[2]! - at[1]!]
    expect(gaps[0]).toBeGreaterThanOrEqual(300)
    expect(gaps[0]).toBeLessThan(900)
    expect(gaps[1]).toBeGreaterThanOrEqual(900)
    expect(gaps[1]).toBeLessThan(1_800)
    expect(arrivals.get(`/fail/retry-${app.id}`)).toHaveLength(3)
  })

  it('retryOnFailure: a receiver that recovers gets the delivery on the retry; without retryOnFailure one attempt only', async () => {
    const app = await t.app({ webhooksOnImport: true, webhookRetryDelaysMs: [100, 100] })
    const flaky = `/fail/flaky-${app.id}`
    const once = `/fail/once-${app.id}`
    failuresLeft.set(flaky, 1)
    await t.mgmt.createWebhook(app.id, { id: 'flaky', name: 'F', webhookURL: `${base}${flaky}`, retryOnFailure: true })
    await t.mgmt.createWebhook(app.id, { id: 'once', name: 'O', webhookURL: `${base}${once}` })
    for (const id of ['flaky', 'once']) {
      await t.mgmt.addWebhookTriggers(app.id, id, ['message_sent'])
    }
    await sendOneMessage(app)
    const log = await t.sandbox.deliveries(app.id)
    expect(log.find((d) => d.webhookId === 'flaky')).toMatchObject({ status: 'delivered', attempts: 2, httpStatus: 200 })
    expect(log.find((d) => d.webhookId === 'once')).toMatchObject({ status: 'failed', attempts: 1, httpStatus: 500 })
    expect(arrivals.get(once)).toHaveLength(1)
  })

  it('a retry waiting does not hold up other deliveries (8 failing receivers with retryOnFailure, one healthy)', async () => {
    const app = await t.app({ webhooksOnImport: true, webhookRetryDelaysMs: [1500] })
    for (let i = 0; i < 8; i++) {
      await t.mgmt.createWebhook(app.id, { id: `failing${i}`, name: 'F', webhookURL: `${base}/fail/busy-${app.id}-${i}`, retryOnFailure: true })
      await t.mgmt.addWebhookTriggers(app.id, `failing${i}`, ['message_sent'])
    }
    await t.mgmt.createWebhook(app.id, { id: 'healthy', name: 'H', webhookURL: `${base}/ok/busy-${app.id}` })
    await t.mgmt.addWebhookTriggers(app.id, 'healthy', ['message_sent'])
    await sendOneMessage(app)
    const log = await t.sandbox.deliveries(app.id)
    expect(log.filter((d) => d.webhookId.startsWith('failing')).every((d) => d.attempts === 2 && d.status === 'failed')).toBe(true)
    const firstFailure = Math.min(...log.filter((d) => d.webhookId.startsWith('failing')).map((d) => d.attemptsAtMs[0]!))
    const healthy = log.find((d) => d.webhookId === 'healthy')
    expect(healthy).toMatchObject({ status: 'delivered', attempts: 1 })
    expect(healthy!.attemptsAtMs[0]! - firstFailure, 'the healthy delivery did not wait for the retries').toBeLessThan(1000)
  })

  it('the receiver must answer within 2 s: 1.5 s is delivered, 2.5 s is a failure', async () => {
    const app = await t.app({ webhooksOnImport: true })
    await t.mgmt.createWebhook(app.id, { id: 'fast', name: 'F', webhookURL: `${base}/slow/1500/${app.id}` })
    await t.mgmt.createWebhook(app.id, { id: 'late', name: 'L', webhookURL: `${base}/slow/2500/${app.id}` })
    for (const id of ['fast', 'late']) {
      await t.mgmt.addWebhookTriggers(app.id, id, ['message_sent'])
    }
    await sendOneMessage(app)
    const log = await t.sandbox.deliveries(app.id)
    expect(log.find((d) => d.webhookId === 'fast')).toMatchObject({ status: 'delivered', attempts: 1 })
    expect(log.find((d) => d.webhookId === 'late')).toMatchObject({
      status: 'failed',
      attempts: 1,
      httpStatus: null,
      lastError: 'no answer within 2000 ms',
    })
  })
})

describe('the client refuses bad input before sending', () => {
  it('a bad id, password, URL or trigger id throws WebhookInputError naming the field, and no request arrives', async () => {
    const app = await t.app()
    const secret = testSecret('hookpassword')
    const attempts: [string, () => Promise<unknown>][] = [
      ['id', () => t.mgmt.createWebhook(app.id, { id: 'bad id', name: 'N', webhookURL: 'https://e.com' })],
      [
        'password',
        () => t.mgmt.createWebhook(app.id, { id: 'ok', name: 'N', webhookURL: 'https://e.com', useBasicAuth: true, username: 'u', password: secret }),
      ],
      ['webhookURL', () => t.mgmt.createWebhook(app.id, { id: 'ok', name: 'N', webhookURL: 'http://example.com/hook' })],
      ['webhookURL', () => t.mgmt.updateWebhook(app.id, 'ok', { webhookURL: `https://e.com/${'p'.repeat(300)}` })],
      ['id', () => t.mgmt.deleteWebhook(app.id, 'a-b')],
      ['triggerIds', () => t.mgmt.addWebhookTriggers(app.id, 'ok', ['message_exploded'])],
    ]
    for (const [field, attempt] of attempts) {
      const err = await attempt().catch((e: unknown) => e)
      expect(err).toBeInstanceOf(WebhookInputError)
      expect((err as WebhookInputError).problems.map((p) => p.path.split('.')[0])).toContain(field)
      expect((err as Error).message).not.toContain(secret)
    }
    await t.sandbox.whenIdle()
    expect(await t.sandbox.requests(app.id), 'nothing reached the sandbox').toEqual([])
    // The log does record webhook requests: a good one shows up.
    await t.mgmt.createWebhook(app.id, { id: 'ok', name: 'N', webhookURL: 'https://e.com' })
    await t.sandbox.whenIdle()
    expect((await t.sandbox.requests(app.id)).map((r) => [r.method, r.endpoint, r.status])).toEqual([['POST', 'webhooks', 200]])
  })
})
