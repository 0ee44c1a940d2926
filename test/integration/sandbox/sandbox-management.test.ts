/**
 * Contract of the sandbox's management interface (apps, webhooks), multi-app isolation, the
 * sandbox-only settings endpoint, and webhook delivery to a local receiver.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { createManagementClient, createPlatformClient } from '../../../src/target/client.ts'
import { http, importRaw, MGMT, mgmtRaw, nowSeconds, seedUsers, startTestSandbox, type TestSandbox } from '../../helpers/sandbox.ts'

let t: TestSandbox

interface Received {
  headers: IncomingHttpHeaders
  body: any
}
let receiver: Server
let receiverUrl: string
const received: Received[] = []
let receiverStatus = 200

beforeAll(async () => {
  t = await startTestSandbox()
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      received.push({ headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) })
      res.writeHead(receiverStatus).end()
    })
  })
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r))
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`
})
afterAll(async () => {
  await t?.close()
  await new Promise((r) => receiver?.close(r))
})

describe('management interface', () => {
  it('missing key/secret is 401 AUTH_ERR_EMPTY_AUTH_HEADER; wrong is 401 AUTH_ERR_APIKEY_NOT_FOUND', async () => {
    const none = await http(`${t.sandbox.url}/apps`)
    expect(none.status).toBe(401)
    expect(none.body.error.code).toBe('AUTH_ERR_EMPTY_AUTH_HEADER')
    const onlyKey = await http(`${t.sandbox.url}/apps`, { headers: { key: MGMT.key } })
    expect(onlyKey.body.error.code).toBe('AUTH_ERR_EMPTY_AUTH_HEADER')
    const wrong = await http(`${t.sandbox.url}/apps`, { headers: { key: MGMT.key, secret: 'nope' } })
    expect(wrong.status).toBe(401)
    expect(wrong.body.error.code).toBe('AUTH_ERR_APIKEY_NOT_FOUND')
  })

  it('creates an app with the documented record: id, plan trial, state active, two 40-hex keys', async () => {
    const res = await mgmtRaw(t.sandbox, '/apps', { body: { name: 'My App', region: 'eu', version: '3' } })
    expect(res.status).toBe(200)
    const app = res.body.data
    expect(app).toMatchObject({
      id: expect.stringMatching(/^[a-z0-9]+$/),
      name: 'My App',
      region: 'eu',
      plan: 'trial',
      state: 'active',
      createdAt: expect.any(Number),
    })
    const keys = Object.values(app.apiKeys) as any[]
    expect(keys).toHaveLength(2)
    expect(keys.find((k) => k.scope === 'fullAccess')).toMatchObject({
      apiKey: expect.stringMatching(/^[0-9a-f]{40}$/),
      name: 'Rest API Key',
      createdBy: 'app_system',
    })
    expect(keys.find((k) => k.scope === 'authOnly')).toMatchObject({
      apiKey: expect.stringMatching(/^[0-9a-f]{40}$/),
      name: 'Auth Key',
      createdBy: 'app_system',
    })
    for (const [k, v] of Object.entries(app.apiKeys)) {
      expect((v as any).apiKey).toBe(k)
    }
  })

  it('refuses invalid create requests: name over 100, bad region, version other than 3', async () => {
    for (const body of [
      { name: 'n'.repeat(101), region: 'us', version: '3' },
      { name: 'x', region: 'mars', version: '3' },
      { name: 'x', region: 'us', version: '2' },
      { region: 'us' },
    ]) {
      const res = await mgmtRaw(t.sandbox, '/apps', { body })
      expect(res.status).toBe(400)
      expect(res.body.error.code).toBe('ERR_BAD_REQUEST')
    }
  })

  it('create, list (searchKey, paging) and delete through the management client; a deleted app stops answering', async () => {
    const mgmt = createManagementClient({ url: t.sandbox.url, ...MGMT })
    const created = await mgmt.createApp({ name: 'Listed App', region: 'in', version: '3' })
    const client = createPlatformClient({ baseUrl: `${t.sandbox.url}/apps/${created.appId}/v3`, apiKey: created.restApiKey })
    expect((await client.importUsers([{ uid: 'a', name: 'A' }])).results.get('a')?.ok).toBe(true)
    const found = await mgmt.listApps({ searchKey: 'listed' })
    expect(found.map((a) => a.id)).toEqual([created.appId])
    const byId = await mgmt.listApps({ searchKey: created.appId })
    expect(byId).toHaveLength(1)
    const paged = await mgmtRaw(t.sandbox, '/apps?perPage=1&page=1')
    expect(paged.body.meta.pagination).toMatchObject({ per_page: 1, count: 1 })
    const deleted = await mgmt.deleteApp(created.appId)
    expect(deleted).toMatchObject({ success: true, scheduledToDeleteAt: expect.any(Number) })
    // Documented: archived, "permanently deleted after 30 days".
    expect(deleted.scheduledToDeleteAt).toBeGreaterThanOrEqual(nowSeconds() + 30 * 86_400 - 5)
    expect(deleted.scheduledToDeleteAt).toBeLessThanOrEqual(nowSeconds() + 30 * 86_400 + 5)
    const after = await client.listUsers().catch((e: unknown) => e)
    expect(after).toMatchObject({ status: 403, code: 'ERR_APP_ARCHIVED' })
    expect(await mgmt.listApps({ searchKey: created.appId })).toEqual([])
    // The management interface does not find a deleted app: 404 (its app interfaces answer 403).
    const again = await mgmtRaw(t.sandbox, `/apps/${created.appId}`, { method: 'DELETE' })
    expect(again.status).toBe(404)
    expect(again.body.error.code).toBe('ERR_APP_ARCHIVED')
  })

  it('apps are isolated: same uid in two apps, separate data, separate quotas', async () => {
    const a = await t.app({ requestsPerMinute: 1 })
    const b = await t.app({ requestsPerMinute: 1 })
    await a.client.importUsers([{ uid: 'same', name: 'In A' }])
    await b.client.importUsers([{ uid: 'same', name: 'In B' }])
    expect((await a.client.listUsers()).data.map((u) => u.name)).toEqual(['In A'])
    expect((await b.client.listUsers()).data.map((u) => u.name)).toEqual(['In B'])
    const over = await importRaw(a, 'users', { users: { x: { uid: 'x', name: 'X' } } })
    expect(over.status).toBe(429)
  })

  it('sandbox settings: read, change (deep-merged faults), validated, persisted in the store', async () => {
    const app = await t.app()
    const read = await mgmtRaw(t.sandbox, `/sandbox/apps/${app.id}/settings`)
    expect(read.body.data).toMatchObject({
      requestsPerMinute: 60,
      itemsPerRequest: 50,
      retentionDays: 183,
      windowMs: 60_000,
      webhooksOnImport: false,
      requireGroupMembership: false,
    })
    const changed = await mgmtRaw(t.sandbox, `/sandbox/apps/${app.id}/settings`, {
      method: 'PUT',
      body: { requestsPerMinute: 5, faults: { latencyMs: { max: 3 } } },
    })
    expect(changed.body.data).toMatchObject({ requestsPerMinute: 5, faults: { latencyMs: { min: 0, max: 3 }, extra429: 0 } })
    const bad = await mgmtRaw(t.sandbox, `/sandbox/apps/${app.id}/settings`, { method: 'PUT', body: { requestsPerMinute: 0, bogus: true } })
    expect(bad.status).toBe(400)
    expect(bad.body.error.code).toBe('ERR_BAD_REQUEST')
    const row = await t.sandbox.store.selectFrom('apps').select('settings').where('id', '=', app.id).executeTakeFirstOrThrow()
    expect(row.settings).toMatchObject({ requestsPerMinute: 5 })
    const noAuth = await http(`${t.sandbox.url}/sandbox/apps/${app.id}/settings`)
    expect(noAuth.status).toBe(401)
  })
})

describe('webhooks', () => {
  it('create, list, update, get and delete a webhook; neither username nor password is ever answered', async () => {
    const app = await t.app()
    const password = 'hookpass42'
    const created = await t.mgmt.createWebhook(app.id, {
      id: 'wh1',
      name: 'Hook',
      webhookURL: 'https://example.com/hook',
      useBasicAuth: true,
      username: 'u',
      password,
    })
    expect(created).toMatchObject({ id: 'wh1', enabled: true, version: '2' })
    const list = await mgmtRaw(t.sandbox, `/apps/${app.id}/webhooks`)
    expect(list.body.data).toEqual([expect.objectContaining({ id: 'wh1', name: 'Hook', webhookURL: 'https://example.com/hook' })])
    expect(list.body.data[0].password).toBeUndefined()
    expect(list.body.data[0].username).toBeUndefined()
    expect(JSON.stringify(list.body)).not.toContain(password)
    const updated = await t.mgmt.updateWebhook(app.id, 'wh1', { enabled: false })
    expect(updated).toMatchObject({ enabled: false, name: 'Hook' })
    const one = await mgmtRaw(t.sandbox, `/apps/${app.id}/webhooks/wh1`)
    expect(one.body.data[0].data.enabled).toBe(false)
    expect(JSON.stringify(one.body)).not.toContain(password)
    const row = await t.sandbox.store
      .selectFrom('webhooks')
      .select(['password', 'username'])
      .where('app_id', '=', app.id)
      .where('id', '=', 'wh1')
      .executeTakeFirstOrThrow()
    expect(row, 'an update without credentials keeps them').toEqual({ password, username: 'u' })
    await t.mgmt.deleteWebhook(app.id, 'wh1')
    expect(await t.mgmt.listWebhooks(app.id)).toEqual([])
    const gone = await mgmtRaw(t.sandbox, `/apps/${app.id}/webhooks/wh1`)
    expect(gone.status).toBe(404)
    expect(gone.body.error.code).toBe('ERR_WEBHOOK_NOT_FOUND')
  })

  it('refuses plain http to a public host, ids over 50, URLs over 255, basic auth without credentials, a duplicate id, the 26th webhook', async () => {
    const app = await t.app()
    const post = (body: unknown) => mgmtRaw(t.sandbox, `/apps/${app.id}/webhooks`, { body, headers: { 'x-webhook-version': '2' } })
    const http1 = await post({ id: 'a', name: 'A', webhookURL: 'http://example.com/hook' })
    expect(http1.status).toBe(400)
    expect(http1.body.error.message).toMatch(/invalid/)
    expect(http1.body.error.details.webhookURL.join(' ')).toMatch(/https/)
    expect((await post({ id: 'x'.repeat(51), name: 'A', webhookURL: 'https://e.com' })).status).toBe(400)
    expect((await post({ id: 'x'.repeat(50), name: 'n'.repeat(50), webhookURL: `https://e.com/${'p'.repeat(255 - 14)}` })).status).toBe(200)
    expect((await post({ id: 'y', name: 'A', webhookURL: `https://e.com/${'p'.repeat(256 - 14)}` })).status).toBe(400)
    expect((await post({ id: 'z', name: 'A', webhookURL: 'https://e.com', useBasicAuth: true })).status).toBe(400)
    const dup = await post({ id: 'x'.repeat(50), name: 'A', webhookURL: 'https://e.com' })
    expect(dup.status).toBe(400)
    expect(dup.body.error).toMatchObject({ code: 'ERR_BAD_REQUEST', details: { id: ['already exists'] } })
    for (let i = 1; i < 25; i++) {
      expect((await post({ id: `w${i}`, name: 'W', webhookURL: 'https://e.com' })).status).toBe(200)
    }
    const over = await post({ id: 'w25', name: 'W', webhookURL: 'https://e.com' })
    expect(over.status).toBe(400)
  })

  it('is off for imported data by default: no delivery', async () => {
    const app = await t.app()
    await t.mgmt.createWebhook(app.id, { id: 'wh', name: 'W', webhookURL: receiverUrl })
    await t.mgmt.addWebhookTriggers(app.id, 'wh', ['group_created', 'message_sent'])
    const before = received.length
    await seedUsers(app, ['a'])
    await app.client.importGroups([{ guid: 'g', name: 'G', type: 'public' }])
    await t.sandbox.whenIdle()
    expect(received.length).toBe(before)
    expect(await t.sandbox.deliveries(app.id)).toEqual([])
  })

  it('with webhooksOnImport: group_created, group_member_added and message_sent with Basic auth, logged', async () => {
    const app = await t.app({ webhooksOnImport: true })
    await t.mgmt.createWebhook(app.id, {
      id: 'whbasic',
      name: 'W',
      webhookURL: receiverUrl,
      useBasicAuth: true,
      username: 'hookuser',
      password: 'hookpass',
    })
    await t.mgmt.addWebhookTriggers(app.id, 'whbasic', ['group_created', 'group_member_added', 'message_sent'])
    await seedUsers(app, ['owner', 'bob'])
    await app.client.importGroups([{ guid: 'g1', name: 'G', type: 'public', owner: 'owner', createdAt: 1_700_000_000 }])
    await app.client.importMembers([{ memberId: 'g1_member_bob', guid: 'g1', uid: 'bob', scope: 'participant', joinedAt: 1_700_000_001 }])
    await app.client.importMessages([
      { muid: 'm1', sender: 'bob', receiverType: 'group', receiver: 'g1', data: { text: 'hello' }, sentAt: nowSeconds() - 5 },
    ])
    await t.sandbox.whenIdle()
    const mine = received.filter((r) => r.body.appId === app.id)
    expect(mine.map((r) => r.body.trigger).sort()).toEqual(['group_created', 'group_member_added', 'message_sent'])
    for (const r of mine) {
      expect(r.headers.authorization).toBe(`Basic ${Buffer.from('hookuser:hookpass').toString('base64')}`)
      expect(r.headers['content-type']).toBe('application/json')
      expect(r.body).toMatchObject({ appId: app.id, region: 'us', webhook: 'whbasic' })
    }
    const created = mine.find((r) => r.body.trigger === 'group_created')?.body.data
    expect(created).toMatchObject({ group: { guid: 'g1', owner: 'owner', conversationId: 'group_g1' }, members: {} })
    const added = mine.find((r) => r.body.trigger === 'group_member_added')?.body.data
    expect(added).toMatchObject({
      group: { guid: 'g1', membersCount: 1 },
      members: { bob: { uid: 'bob', scope: 'participant' } },
      by: { uid: 'owner' },
    })
    const sent = mine.find((r) => r.body.trigger === 'message_sent')?.body.data
    expect(sent.message).toMatchObject({ muid: 'm1', category: 'message', data: { text: 'hello' } })
    expect(sent.message.data.entities.sender).toEqual({ entity: expect.objectContaining({ uid: 'bob' }), entityType: 'user' })
    expect(sent.message.data.entities.receiver).toEqual({ entity: expect.objectContaining({ guid: 'g1' }), entityType: 'group' })
    const log = await t.sandbox.deliveries(app.id)
    expect(log).toHaveLength(3)
    expect(log.every((d) => d.status === 'delivered' && d.attempts === 1 && d.httpStatus === 200)).toBe(true)
  })

  it('without Basic auth: no Authorization header; only added triggers are delivered; disabled webhooks and webhooks without triggers get nothing', async () => {
    const app = await t.app({ webhooksOnImport: true })
    await t.mgmt.createWebhook(app.id, { id: 'plain', name: 'P', webhookURL: receiverUrl })
    await t.mgmt.addWebhookTriggers(app.id, 'plain', ['message_sent'])
    await t.mgmt.createWebhook(app.id, { id: 'off', name: 'O', webhookURL: receiverUrl, enabled: false })
    await t.mgmt.addWebhookTriggers(app.id, 'off', ['message_sent', 'group_created'])
    await t.mgmt.createWebhook(app.id, { id: 'none', name: 'N', webhookURL: receiverUrl })
    await seedUsers(app, ['a', 'b'])
    await app.client.importGroups([{ guid: 'g', name: 'G', type: 'public' }])
    await app.client.importMessages([{ muid: 'm', sender: 'a', receiverType: 'user', receiver: 'b', data: { text: 'x' }, sentAt: nowSeconds() - 1 }])
    await t.sandbox.whenIdle()
    const mine = received.filter((r) => r.body.appId === app.id)
    expect(mine).toHaveLength(1)
    expect(mine[0]?.body).toMatchObject({ trigger: 'message_sent', webhook: 'plain' })
    expect(mine[0]?.headers.authorization).toBeUndefined()
  })

  it('a failing receiver without retryOnFailure gets one attempt, logged as failed; the import is unaffected', async () => {
    const app = await t.app({ webhooksOnImport: true, webhookRetryDelaysMs: [50, 50] })
    await t.mgmt.createWebhook(app.id, { id: 'bad', name: 'B', webhookURL: receiverUrl })
    await t.mgmt.addWebhookTriggers(app.id, 'bad', ['message_sent'])
    await seedUsers(app, ['a', 'b'])
    receiverStatus = 500
    try {
      const res = await app.client.importMessages([
        { muid: 'm', sender: 'a', receiverType: 'user', receiver: 'b', data: { text: 'x' }, sentAt: nowSeconds() - 1 },
      ])
      expect(res.results.get('m')?.ok).toBe(true)
      await t.sandbox.whenIdle()
    } finally {
      receiverStatus = 200
    }
    const [d] = await t.sandbox.deliveries(app.id)
    expect(d).toMatchObject({ status: 'failed', attempts: 1, httpStatus: 500, lastError: 'HTTP 500', trigger: 'message_sent' })
    const viaHttp = await mgmtRaw(t.sandbox, `/sandbox/apps/${app.id}/webhook-deliveries`)
    expect(viaHttp.body.data[0]).toMatchObject({ status: 'failed', attempts: 1 })
  })
})
