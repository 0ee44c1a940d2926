/**
 * Contract of the sandbox's message edit and delete over real HTTP and through the typed client:
 * only the sender (onBehalfOf) may act; edits show `editedAt`/`editedBy`, soft deletes
 * `deletedAt`/`deletedBy` in both reads; a permanent delete is gone; each refusal has its code; the
 * request log names the message id once per call; `message_edited`/`message_deleted` webhooks.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import type { PlatformError } from '../../../src/target/errors.ts'
import { WebhookEnvelope } from '../../../src/target/webhooks.ts'
import { chatRaw, chatWorld, chatWrites, hookUp, webhookReceiver } from '../../helpers/chat-world.ts'
import { startTestSandbox, type TestSandbox } from '../../helpers/sandbox.ts'

let t: TestSandbox
beforeAll(async () => {
  t = await startTestSandbox()
})
afterAll(async () => {
  await t?.close()
})

const codeOf = (e: unknown) => (e as PlatformError).code

describe('PUT /messages/{id}', () => {
  it('the sender edits text and metadata; the reads show editedAt/editedBy; other data stays', async () => {
    const { app, ids } = await chatWorld(t)
    const m1 = ids.m1 as string
    const res = await app.client.updateMessage(m1, { data: { text: 'hello, edited', metadata: { legacy: { id: '1', edited: true } } } }, 'alice')
    expect(res.action).toMatchObject({ category: 'action', type: 'message', sender: 'alice', data: { action: 'edited' } })
    expect(res.action.id).not.toBe(m1)
    expect(res.message).toMatchObject({ id: m1, editedBy: 'alice', data: { text: 'hello, edited' } })
    const read = await app.client.getMessage(m1)
    expect(read).toMatchObject({ id: m1, editedBy: 'alice', data: { text: 'hello, edited', metadata: { legacy: { id: '1', edited: true } } } })
    expect(read.editedAt).toBeGreaterThan(0)
    const listed = (await app.client.listMessages({ limit: 10 })).data.find((m) => m.id === m1)
    expect(listed).toMatchObject({ editedBy: 'alice', data: { text: 'hello, edited' } })
    expect(await chatWrites(t, app)).toEqual([{ endpoint: 'messages.update', status: 200, code: null, items: [{ key: m1, result: 'applied' }] }])
  })

  it.each([
    {
      name: 'onBehalfOf a user who is not the sender',
      id: 'm1',
      body: { data: { text: 'x' } },
      as: 'bob',
      status: 403,
      code: 'ERR_MESSAGE_NOT_A_SENDER',
    },
    { name: 'onBehalfOf an unknown user', id: 'm1', body: { data: { text: 'x' } }, as: 'ghost', status: 404, code: 'ERR_UID_NOT_FOUND' },
    { name: 'an unknown message', id: '999999', body: { data: { text: 'x' } }, as: 'alice', status: 404, code: 'ERR_MESSAGE_ID_NOT_FOUND' },
    { name: 'empty text on a text message', id: 'm1', body: { data: { text: ' ' } }, as: 'alice', status: 400, code: 'ERR_EMPTY_MESSAGE_TEXT' },
    { name: 'a data field the PUT does not take', id: 'm1', body: { data: { attachments: [] } }, as: 'alice', status: 400, code: 'ERR_BAD_REQUEST' },
  ])('refuses $name with $code, the message unchanged', async ({ id, body, as, status, code }) => {
    const { app, ids } = await chatWorld(t)
    const messageId = ids[id] ?? id
    const res = await chatRaw(app, 'PUT', `messages/${messageId}`, body, { onBehalfOf: as })
    expect(res.status).toBe(status)
    expect(res.body.error.code).toBe(code)
    const m1 = await app.client.getMessage(ids.m1 as string)
    expect(m1.data?.text).toBe('hello group')
    expect(m1.editedAt).toBeUndefined()
    expect(await chatWrites(t, app)).toEqual([{ endpoint: 'messages.update', status, code, items: [{ key: messageId, result: 'refused', code }] }])
  })

  it('a deactivated sender cannot be onBehalfOf (ERR_UID_NOT_FOUND); the app can still edit', async () => {
    const { app, ids } = await chatWorld(t)
    await app.client.deactivateUsers(['bob'])
    expect(await app.client.updateMessage(ids.m2 as string, { data: { text: 'x' } }, 'bob').catch(codeOf)).toBe('ERR_UID_NOT_FOUND')
    const res = await app.client.updateMessage(ids.m2 as string, { data: { text: 'edited by the app' } }, undefined)
    expect(res.message).toMatchObject({ editedBy: 'app_system', data: { text: 'edited by the app' } })
  })

  it('without onBehalfOf the app edits (editedBy app_system, as the documented example)', async () => {
    const { app, ids } = await chatWorld(t)
    const res = await chatRaw(app, 'PUT', `messages/${ids.m2}`, { data: { text: 'by the app' } })
    expect(res.status).toBe(200)
    expect((await app.client.getMessage(ids.m2 as string)).editedBy).toBe('app_system')
  })
})

describe('DELETE /messages/{id}', () => {
  it('a soft delete shows deletedAt/deletedBy, hideDeleted/onlyDeleted filter it, and a second delete is refused', async () => {
    const { app, ids } = await chatWorld(t)
    const m2 = ids.m2 as string
    const res = await app.client.deleteMessage(m2, 'bob')
    expect(res.action.data).toMatchObject({ action: 'deleted' })
    expect(res.message).toMatchObject({ id: m2, deletedBy: 'bob' })
    const read = await app.client.getMessage(m2)
    expect(read.deletedBy).toBe('bob')
    expect(read.deletedAt).toBeGreaterThan(0)
    expect((await app.client.listMessages({ limit: 10 })).data.map((m) => m.id)).toEqual([ids.m1, m2])
    expect((await app.client.listMessages({ hideDeleted: true, limit: 10 })).data.map((m) => m.id)).toEqual([ids.m1])
    expect((await app.client.listMessages({ onlyDeleted: true, limit: 10 })).data.map((m) => m.id)).toEqual([m2])
    expect(await app.client.deleteMessage(m2, 'bob').catch(codeOf)).toBe('ERR_MESSAGE_ACTION_NOT_ALLOWED')
    expect(await app.client.updateMessage(m2, { data: { text: 'late edit' } }, 'bob').catch(codeOf)).toBe('ERR_MESSAGE_ACTION_NOT_ALLOWED')
    expect((await chatWrites(t, app)).map((e) => [e.endpoint, e.status, e.items?.[0]?.result])).toEqual([
      ['messages.delete', 200, 'applied'],
      ['messages.delete', 400, 'refused'],
      ['messages.update', 400, 'refused'],
    ])
  })

  it('only the sender may delete: ERR_MESSAGE_NOT_A_SENDER', async () => {
    const { app, ids } = await chatWorld(t)
    expect(await app.client.deleteMessage(ids.m2 as string, 'alice').catch(codeOf)).toBe('ERR_MESSAGE_NOT_A_SENDER')
    expect((await app.client.getMessage(ids.m2 as string)).deletedAt).toBeUndefined()
  })

  it('a permanent delete removes the message: reads answer ERR_MESSAGE_ID_NOT_FOUND', async () => {
    const { app, ids } = await chatWorld(t)
    await app.client.deleteMessage(ids.m1 as string, 'alice', { permanent: true })
    expect(await app.client.getMessage(ids.m1 as string).catch(codeOf)).toBe('ERR_MESSAGE_ID_NOT_FOUND')
    expect((await app.client.listMessages({ limit: 10 })).data.map((m) => m.id)).toEqual([ids.m2])
  })

  it('a DELETE without a body is a soft delete', async () => {
    const { app, ids } = await chatWorld(t)
    const res = await chatRaw(app, 'DELETE', `messages/${ids.m1}`, undefined, { onBehalfOf: 'alice' })
    expect(res.status).toBe(200)
    expect((await app.client.getMessage(ids.m1 as string)).deletedBy).toBe('alice')
  })
})

describe('webhooks', () => {
  it('message_edited and message_deleted carry the action message with the message acted on', async () => {
    const hook = await webhookReceiver()
    try {
      const { app, ids } = await chatWorld(t)
      await hookUp(t, app, hook.url, ['message_edited', 'message_deleted'])
      await app.client.updateMessage(ids.m1 as string, { data: { text: 'edited' } }, 'alice')
      await app.client.deleteMessage(ids.m1 as string, 'alice')
      await t.sandbox.whenIdle()
      const seen = hook.received
        .map((r) => WebhookEnvelope.parse(r))
        .map((e) => {
          const message = e.data.message as { data: { action: string; entities: { on: { entity: { id: string } } } } }
          return [e.trigger, message.data.action, message.data.entities.on.entity.id]
        })
        .sort()
      expect(seen).toEqual([
        ['message_deleted', 'deleted', ids.m1],
        ['message_edited', 'edited', ids.m1],
      ])
    } finally {
      await hook.close()
    }
  })
})
