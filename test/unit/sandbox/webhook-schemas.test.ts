/**
 * The webhook schemas of src/target/webhooks.ts: the documented field rules at their boundaries,
 * the three published answer shapes, and input errors that name fields without repeating values.
 */
import { describe, expect, it } from 'vitest'

import {
  CreateWebhookRequest,
  parseWebhookInput,
  UpdateWebhookRequest,
  WebhookAnswer,
  WebhookInputError,
  webhookOfAnswer,
  WebhookTriggersRequest,
} from '../../../src/target/webhooks.ts'

const base = { id: 'hook_1', name: 'Hook', webhookURL: 'https://hooks.example.com/x' }
const ok = (input: unknown) => CreateWebhookRequest.safeParse(input).success

describe('CreateWebhookRequest', () => {
  it('takes the documented defaults: useBasicAuth false, enabled true, retryOnFailure false', () => {
    expect(CreateWebhookRequest.parse(base)).toEqual({ ...base, useBasicAuth: false, enabled: true, retryOnFailure: false })
  })

  it('holds each limit at its boundary', () => {
    expect(ok({ ...base, id: 'i'.repeat(50) })).toBe(true)
    expect(ok({ ...base, id: 'i'.repeat(51) })).toBe(false)
    expect(ok({ ...base, name: 'n'.repeat(50) })).toBe(true)
    expect(ok({ ...base, name: 'n'.repeat(51) })).toBe(false)
    const url = (n: number) => `https://e.com/${'p'.repeat(n - 'https://e.com/'.length)}`
    expect(ok({ ...base, webhookURL: url(255) })).toBe(true)
    expect(ok({ ...base, webhookURL: url(256) })).toBe(false)
    const auth = (username: string, password: string) => ({ ...base, useBasicAuth: true, username, password })
    expect(ok(auth('u'.repeat(50), 'p'.repeat(100)))).toBe(true)
    expect(ok(auth('u'.repeat(51), 'p'))).toBe(false)
    expect(ok(auth('u', 'p'.repeat(101)))).toBe(false)
  })

  it('is alphanumeric without spaces: _ only in ids, as the docs example does', () => {
    for (const id of ['a b', 'a-b', 'a.b', 'ä', '']) {
      expect(ok({ ...base, id }), id).toBe(false)
    }
    expect(ok({ ...base, id: 'test_webhook201' })).toBe(true)
    for (const u of ['a_b', 'a b', 'a-b', 'é']) {
      expect(ok({ ...base, useBasicAuth: true, username: u, password: 'p' }), `username ${u}`).toBe(false)
      expect(ok({ ...base, useBasicAuth: true, username: 'u', password: u }), `password ${u}`).toBe(false)
    }
  })

  it('refuses unknown fields (the invented triggers) and basic auth without credentials', () => {
    expect(ok({ ...base, triggers: ['message_sent'] })).toBe(false)
    expect(ok({ ...base, useBasicAuth: true, username: 'u' })).toBe(false)
    expect(UpdateWebhookRequest.safeParse({ id: 'x' }).success).toBe(false)
    expect(UpdateWebhookRequest.safeParse({ retryOnFailure: true }).success).toBe(true)
  })

  it('accepts https anywhere, http only to loopback', () => {
    expect(ok({ ...base, webhookURL: 'http://127.0.0.1:9/x' })).toBe(true)
    expect(ok({ ...base, webhookURL: 'http://localhost/x' })).toBe(true)
    expect(ok({ ...base, webhookURL: 'http://example.com/x' })).toBe(false)
    expect(ok({ ...base, webhookURL: 'not a url' })).toBe(false)
  })
})

describe('parseWebhookInput', () => {
  it('names every bad field and never repeats a value', () => {
    const password = 'cf-test-secret-webhookpw_0a1b2c'
    const err = (() => {
      try {
        parseWebhookInput('op', CreateWebhookRequest, { ...base, id: 'bad id', useBasicAuth: true, username: 'u', password })
      } catch (e) {
        return e
      }
      return undefined
    })()
    expect(err).toBeInstanceOf(WebhookInputError)
    const e = err as WebhookInputError
    expect(e.code).toBe('CONFIG_INVALID')
    expect(e.problems.map((p) => p.path).sort()).toEqual(['id', 'password'])
    expect(e.message).not.toContain(password)
    expect(e.message).not.toContain('bad id')
  })

  it('trigger ids outside the documented list are named', () => {
    const r = WebhookTriggersRequest.safeParse({ triggerIds: ['message_sent', 'msg_sent'] })
    expect(r.success).toBe(false)
    expect(r.error?.issues[0]?.message).toContain('"msg_sent"')
    expect(WebhookTriggersRequest.safeParse({ triggerIds: [] }).success).toBe(false)
  })
})

describe('WebhookAnswer', () => {
  const hook = { id: 'h', name: 'H', webhookURL: 'https://e.com', enabled: true, createdAt: 1, updatedAt: 2 }
  it('reads the create example [{data}], the get example {data: [{data}]} and a plain {data}', () => {
    for (const answer of [[{ data: hook }], { data: [{ data: hook }] }, { data: hook }]) {
      expect(webhookOfAnswer(WebhookAnswer.parse(answer))).toMatchObject(hook)
    }
  })
  it('refuses an answer that is none of them', () => {
    expect(WebhookAnswer.safeParse({ data: [] }).success).toBe(false)
    expect(WebhookAnswer.safeParse([]).success).toBe(false)
    expect(WebhookAnswer.safeParse({ data: { name: 'no id' } }).success).toBe(false)
  })
})
