/**
 * A small app for the chat-write tests: users, a group with members, and messages imported through
 * the data-import interface, plus raw chat calls and the chat-write entries of the request log.
 */
import { createServer } from 'node:http'

import { CHAT_WRITE_ENDPOINTS } from '../../src/sandbox/chat-write-route.ts'
import type { RequestLogEntry, RequestLogItem } from '../../src/sandbox/request-log.ts'
import type { WebhookTrigger } from '../../src/target/webhooks.ts'
import { http, nowSeconds, type RawResponse, seedUsers, type TestApp, type TestSandbox } from './sandbox.ts'

export interface ChatWorld {
  readonly app: TestApp
  /** Platform ids of the imported messages, by muid. */
  readonly ids: Record<string, string>
}

/** Users alice, bob, carol, dave, erin; group `g1` (owner alice; alice admin, bob participant, carol moderator); messages m1 (alice → g1), m2 (bob → alice). */
export async function chatWorld(t: TestSandbox, settings: Parameters<TestSandbox['app']>[0] = {}): Promise<ChatWorld> {
  const app = await t.app({ requestsPerMinute: 1000, ...settings })
  await seedUsers(app, ['alice', 'bob', 'carol', 'dave', 'erin'])
  const created = nowSeconds() - 1000
  await app.client.importGroups([{ guid: 'g1', name: 'Group one', type: 'public', owner: 'alice', createdAt: created }])
  await app.client.importMembers([
    { memberId: 'g1_member_alice', guid: 'g1', uid: 'alice', scope: 'admin', joinedAt: created + 1 },
    { memberId: 'g1_member_bob', guid: 'g1', uid: 'bob', scope: 'participant', joinedAt: created + 2 },
    { memberId: 'g1_member_carol', guid: 'g1', uid: 'carol', scope: 'moderator', joinedAt: created + 3 },
  ])
  const res = await app.client.importMessages([
    {
      muid: 'm1',
      sender: 'alice',
      receiverType: 'group',
      receiver: 'g1',
      data: { text: 'hello group', metadata: { legacy: { id: '1' } } },
      sentAt: created + 10,
    },
    { muid: 'm2', sender: 'bob', receiverType: 'user', receiver: 'alice', data: { text: 'hi alice' }, sentAt: created + 11 },
  ])
  const ids: Record<string, string> = {}
  for (const [muid, r] of res.results) {
    if (!r.ok) {
      throw new Error(`seeding message ${muid} failed: ${r.code}`)
    }
    ids[muid] = String((r.data as { id: string }).id)
  }
  return { app, ids }
}

/** A chat call as curl would send it, with the app's key (and `onBehalfOf` when given). */
export function chatRaw(app: TestApp, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<RawResponse> {
  return http(`${app.baseUrl}/${path}`, { method, headers: { apikey: app.apiKey, ...headers }, ...(body !== undefined ? { body } : {}) })
}

/** One chat write the sandbox received: its endpoint name, status, code and per-key outcomes. */
export interface ChatWriteCall {
  readonly endpoint: string
  readonly status: number | null
  readonly code: string | null
  readonly items: RequestLogItem[] | null | undefined
}

/**
 * The chat-write entries of the app's request log, oldest first. Takes the test sandbox or a
 * `Sandbox` (anything with `requests(appId)`), so a delta-run test can assert "exactly these calls,
 * once each" from what the sandbox received.
 */
export async function chatWrites(
  sb: TestSandbox | { requests(appId: string): Promise<RequestLogEntry[]> },
  app: { id: string },
): Promise<ChatWriteCall[]> {
  const names: readonly string[] = CHAT_WRITE_ENDPOINTS
  const all: RequestLogEntry[] = 'sandbox' in sb ? await sb.sandbox.requests(app.id) : await sb.requests(app.id)
  return all.filter((e) => names.includes(e.endpoint)).map(({ endpoint, status, code, items }) => ({ endpoint, status, code, items }))
}

/**
 * The chat writes as `endpoint key result` lines (one per key), sorted: compare with the calls a
 * delta should make. A key applied twice by the same endpoint shows up as two equal lines.
 */
export function chatWriteLines(calls: readonly ChatWriteCall[]): string[] {
  return calls.flatMap((c) => (c.items ?? []).map((i) => `${c.endpoint} ${i.key} ${i.result}${i.code ? ` ${i.code}` : ''}`)).sort()
}

/** A local webhook receiver: every delivery's JSON body, in arrival order. */
export async function webhookReceiver(): Promise<{ url: string; received: unknown[]; close(): Promise<void> }> {
  const received: unknown[] = []
  const server = createServer((req, res) => {
    let body = ''
    req.on('data', (c: Buffer) => (body += c.toString()))
    req.on('end', () => {
      received.push(JSON.parse(body))
      res.end('ok')
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const port = (server.address() as { port: number }).port
  return { url: `http://127.0.0.1:${port}/hook`, received, close: () => new Promise((r) => server.close(() => r())) }
}

/** A webhook `hook1` of the app at `url` with these triggers. */
export async function hookUp(t: TestSandbox, app: TestApp, url: string, triggers: readonly WebhookTrigger[]): Promise<void> {
  await t.mgmt.createWebhook(app.id, { id: 'hook1', name: 'hook', webhookURL: url })
  await t.mgmt.addWebhookTriggers(app.id, 'hook1', [...triggers])
}
