/**
 * Issue 15 part 1, changes made on the platform, end to end: a generic-sql source on Postgres, a
 * Postgres ledger, the sandbox over HTTP and the CLI as processes. `chatferry webhooks receive`
 * registers a v2 webhook with Basic auth on the sandbox app; the sandbox's chat interface edits a
 * message and renames a group after the bulk load (the sandbox delivers `message_edited` and
 * `group_updated` to the receiver); the source edits the same message and group: `run --delta`
 * holds both back (`changes.conflicts: report`, the default) and the sandbox's request log shows no
 * call for either, `status` lists them with legacy id and target key; with `source-wins`,
 * `retry-rejected --conflicts` and `load` apply each once. Deliveries with bad credentials (401)
 * and malformed bodies (400) are refused and not stored; a redelivery is stored once; a change made
 * while the receiver is down arrives on the platform's retry and the next delta still refuses. The
 * update lane checks again just before it sends (an event stored after the intent was recorded).
 */
import { createServer as createHttpServer } from 'node:http'
import { createServer } from 'node:net'

import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { inspectLedger } from '../../../src/state/inspect-ledger.ts'
import { openLedger } from '../../../src/state/store.ts'
import { CONFLICT_TRIGGERS } from '../../../src/target/webhook-changes.ts'
import { CHANGES_SCHEMA, changesSource } from '../../fixtures/generic-sql/changes-source.ts'
import { openGenericWriter } from '../../fixtures/generic-sql/fixture.ts'
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts'
import { lastRequestId, ledgerKeys, receivedSince } from '../../helpers/delta-e2e.ts'
import { type CliRun, runCli } from '../../helpers/ledger-fixtures.ts'
import { dropWithin } from '../../helpers/loader-harness.ts'
import { writeRunConfig } from '../../helpers/run-e2e.ts'
import { http, MGMT, startTestSandbox, type TestApp, type TestSandbox } from '../../helpers/sandbox.ts'
import { runLaneOnce } from '../../helpers/update-lane-harness.ts'

const MGMT_ENV = (url: string) => ({ CHATFERRY_MGMT_URL: url, CHATFERRY_MGMT_KEY: MGMT.key, CHATFERRY_MGMT_SECRET: MGMT.secret })
const T = Math.floor(Date.now() / 1000) - 86_400
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

let tsb: TestSandbox
let source: TestDatabase
let state: TestDatabase
let app: TestApp
let cfg: string
let jobId: string
let port: number
let receiver: CliRun | undefined

async function freePort(): Promise<number> {
  const srv = createServer()
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()))
  const p = (srv.address() as { port: number }).port
  await new Promise<void>((r) => srv.close(() => r()))
  return p
}

/** The job's configuration file (a new one each call), with this `changes:` section. */
function configWith(changes?: Record<string, unknown>): string {
  return writeRunConfig({
    appId: app.id,
    apiKey: app.apiKey,
    baseUrl: app.baseUrl,
    stateUrl: state.url,
    source: changesSource(source.url),
    policies: { retention: { oldMessages: 'send' } },
    ...(changes ? { changes } : {}),
    load: { quotaWindowMs: 10_000 },
  })
}

const publicUrl = () => `http://127.0.0.1:${port}/hooks`

function startReceiver(): CliRun {
  return runCli(['webhooks', 'receive', '--config', cfg, '--public-url', publicUrl(), '--port', String(port), '--json'], MGMT_ENV(tsb.sandbox.url))
}

async function stopReceiver(): Promise<void> {
  if (receiver !== undefined) {
    receiver.child.kill('SIGTERM')
    const r = await receiver.done
    expect(r.code, r.stderr.slice(-2000)).toBe(0)
    receiver = undefined
  }
}

async function source_(statements: string[]): Promise<void> {
  const w = await openGenericWriter('postgres', source.url)
  try {
    for (const s of statements) {
      await w.exec(s)
    }
  } finally {
    await w.close()
  }
}

/** Rows of `chatferry.platform_events` of the job: trigger, key, origin. */
async function events(): Promise<{ trigger: string; platform_key: string; origin: string }[]> {
  const store = await openLedger({ url: state.url, poolSize: 1 })
  try {
    const r = await sql<{ trigger: string; platform_key: string; origin: string }>`
      select trigger, platform_key, origin from chatferry.platform_events where job_id = ${jobId} order by id`.execute(inspectLedger(store))
    return r.rows
  } finally {
    await store.close()
  }
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, ms = 20_000): Promise<T> {
  const until = Date.now() + ms
  for (;;) {
    const v = await probe()
    if (v !== undefined) {
      return v
    }
    if (Date.now() > until) {
      throw new Error(`timed out waiting for ${what}`)
    }
    await sleep(200)
  }
}

/** The updates of the job by status: `kind legacyId status`. */
async function updates(): Promise<string[]> {
  const store = await openLedger({ url: state.url, poolSize: 1 })
  try {
    const r = await sql<{ s: string }>`
      select kind || ' ' || legacy_id || ' ' || status as s from chatferry.updates where job_id = ${jobId} order by id`.execute(inspectLedger(store))
    return r.rows.map((x) => x.s)
  } finally {
    await store.close()
  }
}

beforeAll(async () => {
  tsb = await startTestSandbox()
  source = await createTestDatabase('cf_whr_src')
  state = await createTestDatabase('cf_whr_state')
  await source_(CHANGES_SCHEMA)
  const w = await openGenericWriter('postgres', source.url)
  await w.insert(
    'people',
    [1, 2, 3].map((pid) => ({ pid, full_name: `Person ${pid}`, handle: `h${pid}`, joined_s: T - 3600, modified_s: T })),
  )
  await w.insert('rooms', [
    { rid: 'r1', title: 'General', visibility: 'public', owner: 1, created_s: T - 3000, modified_s: T },
    { rid: 'r2', title: 'Ops', visibility: 'public', owner: 2, created_s: T - 3000, modified_s: T },
  ])
  await w.insert('room_people', [
    { rid: 'r1', pid: 1, role: 'admin', modified_s: T },
    { rid: 'r1', pid: 2, role: 'participant', modified_s: T },
    { rid: 'r2', pid: 2, role: 'admin', modified_s: T },
  ])
  await w.insert(
    'lines',
    [1, 2, 3, 4].map((lid) => ({
      lid,
      author: lid % 2 === 0 ? 2 : 1,
      room: 'r1',
      body: `line ${lid}`,
      posted_s: T + lid,
      edited_s: null,
      modified_s: T + lid,
    })),
  )
  await w.close()
  // Retries after 5 s and 20 s (the platform's are 10 s and 30 s): the receiver-down case fits in a test.
  app = await tsb.app({ retentionDays: 100_000, requestsPerMinute: 6000, windowMs: 10_000, webhookRetryDelaysMs: [5000, 20_000] })
  cfg = configWith()
  jobId = app.id.toLowerCase()
  port = await freePort()
  const bulk = await runCli(['run', '--config', cfg]).done
  expect(bulk.code, bulk.stderr.slice(-3000)).toBe(0)
}, 120_000)

afterAll(async () => {
  receiver?.child.kill('SIGKILL')
  await tsb?.close()
  await dropWithin(source)
  await dropWithin(state)
})

describe('chatferry webhooks receive', () => {
  it('registers a v2 webhook with the triggers, retries and Basic auth; the password is never printed and the ledger keeps only its hash', async () => {
    receiver = startReceiver()
    await receiver.waitFor('"listening"', 30_000)
    const webhookId = `chatferry_${jobId.replace(/[^a-z0-9_]/g, '_')}`
    const hook = await tsb.mgmt.getWebhook(app.id, webhookId)
    expect(hook).toMatchObject({ webhookURL: publicUrl(), enabled: true, version: '2' })
    // Answers never carry the credentials or the retry flag: what the sandbox stored.
    const row = await tsb.sandbox.store
      .selectFrom('webhooks')
      .select(['use_basic_auth', 'username', 'retry_on_failure'])
      .where('app_id', '=', app.id)
      .where('id', '=', webhookId)
      .executeTakeFirstOrThrow()
    expect(row).toEqual({ use_basic_auth: true, username: 'chatferry', retry_on_failure: true })
    const triggers = (await tsb.mgmt.listWebhookTriggers(app.id, webhookId)).map((t) => t.id).sort()
    expect(triggers).toEqual([...CONFLICT_TRIGGERS].sort())
    const stored = await tsb.sandbox.store.selectFrom('webhooks').select(['password']).where('app_id', '=', app.id).executeTakeFirstOrThrow()
    const password = stored.password as string
    expect(password).toMatch(/^[A-Za-z0-9]{40}$/)
    const store = await openLedger({ url: state.url, poolSize: 1 })
    try {
      const row = await sql<{ password_hash: string }>`select password_hash from chatferry.webhook_receivers where job_id = ${jobId}`.execute(
        inspectLedger(store),
      )
      expect(row.rows[0]?.password_hash).toMatch(/^sha256:[0-9a-f]{32}:[0-9a-f]{64}$/)
      expect(row.rows[0]?.password_hash).not.toContain(password)
    } finally {
      await store.close()
    }

    // A restart reuses the registration: the platform keeps the same password.
    await stopReceiver()
    receiver = startReceiver()
    await receiver.waitFor('"listening"', 30_000)
    const again = await tsb.sandbox.store.selectFrom('webhooks').select(['password']).where('app_id', '=', app.id).executeTakeFirstOrThrow()
    expect(again.password).toBe(password)
    await sleep(200)
    expect(receiver.child.exitCode).toBeNull()
    // Never in what the receiver printed (the suite's output scan covers the known test secrets; this one was generated).
    const out = await (async () => {
      const r = receiver as CliRun
      r.child.kill('SIGTERM')
      receiver = undefined
      return r.done
    })()
    expect(out.code).toBe(0)
    expect(`${out.stdout}${out.stderr}`).not.toContain(password)
    receiver = startReceiver()
    await receiver.waitFor('"listening"', 30_000)
  }, 90_000)

  it('refuses bad credentials (401) and malformed bodies (400) without storing them; stores a redelivery once', async () => {
    const before = (await events()).length
    const stored = await tsb.sandbox.store.selectFrom('webhooks').select(['password', 'id']).where('app_id', '=', app.id).executeTakeFirstOrThrow()
    const good = `Basic ${Buffer.from(`chatferry:${stored.password as string}`).toString('base64')}`
    const bad = `Basic ${Buffer.from('chatferry:wrongpassword1').toString('base64')}`
    const keys = await ledgerKeys(state.url, jobId, 'groups')
    const envelope = {
      trigger: 'group_updated',
      data: {
        group: {
          guid: keys.get('r2')?.key,
          name: 'Ops (edited by hand)',
          type: 'public',
          conversationId: 'group_r2',
          updatedAt: Math.floor(Date.now() / 1000),
        },
      },
      appId: app.id,
      region: 'us',
      webhook: stored.id,
    }
    expect((await http(publicUrl(), { body: envelope })).status).toBe(401)
    expect((await http(publicUrl(), { body: envelope, headers: { authorization: bad } })).status).toBe(401)
    const notJson = await http(publicUrl(), { body: '{"trigger": ', headers: { authorization: good, 'content-type': 'application/json' } })
    expect(notJson.status).toBe(400)
    const noGroup = await http(publicUrl(), { body: { ...envelope, data: {} }, headers: { authorization: good } })
    expect(noGroup.status).toBe(400)
    expect(JSON.stringify(noGroup.body)).toContain('data.group')
    const unknownTrigger = await http(publicUrl(), { body: { ...envelope, trigger: 'group_renamed' }, headers: { authorization: good } })
    expect(unknownTrigger.status).toBe(400)
    expect(await events()).toHaveLength(before)
    await receiver?.waitFor('delivery refused (400)')

    // The same delivery twice (a retry): stored once.
    expect((await http(publicUrl(), { body: envelope, headers: { authorization: good } })).status).toBe(200)
    expect((await http(publicUrl(), { body: envelope, headers: { authorization: good } })).status).toBe(200)
    const after = (await events()).slice(before)
    expect(after).toEqual([{ trigger: 'group_updated', platform_key: keys.get('r2')?.key, origin: 'platform' }])

    // What it logged about all this: no password, no header, no value of the envelopes.
    const r = receiver as CliRun
    r.child.kill('SIGTERM')
    receiver = undefined
    const out = await r.done
    expect(out.code).toBe(0)
    expect(out.stderr).toMatch(/delivery refused \(401\)/)
    expect(out.stderr).toContain('delivery refused (400)')
    expect(out.stderr).toContain('data.group: ')
    for (const secret of [stored.password as string, good.slice(6), bad.slice(6), 'wrongpassword1', 'Ops (edited by hand)']) {
      expect(`${out.stdout}${out.stderr}`).not.toContain(secret)
    }
    receiver = startReceiver()
    await receiver.waitFor('"listening"', 30_000)
  }, 60_000)

  it('a message edited and a group renamed on the platform are not overwritten by the delta (report); source-wins applies them once', async () => {
    const users = await ledgerKeys(state.url, jobId, 'users')
    const groups = await ledgerKeys(state.url, jobId, 'groups')
    const messages = await ledgerKeys(state.url, jobId, 'messages')
    const msg = messages.get('1')
    const r1 = groups.get('r1')?.key as string
    expect(msg?.platformId).toBeTruthy()
    const seen = (await events()).length
    // Through the sandbox's chat interface, after the import: the sender edits, an admin renames.
    await app.client.updateMessage(msg?.platformId as string, { data: { text: 'edited on the platform' } }, users.get('1')?.key)
    await app.client.updateGroup(r1, { name: 'Renamed on the platform' })
    await waitFor('both deliveries', async () => ((await events()).length >= seen + 2 ? true : undefined))
    // Sorted: the platform promises no order between deliveries, and the sandbox sends them concurrently.
    expect(
      (await events())
        .slice(seen)
        .map((e) => `${e.trigger} ${e.origin}`)
        .sort(),
    ).toEqual(['group_updated platform', 'message_edited platform'])

    // The source changes the same message and group, and a user (users cannot conflict: no trigger).
    const now = Math.floor(Date.now() / 1000)
    await source_([
      `UPDATE lines SET body = 'edited in the source', edited_s = ${now}, modified_s = ${now} WHERE lid = 1`,
      `UPDATE rooms SET title = 'Renamed in the source', modified_s = ${now} WHERE rid = 'r1'`,
      `UPDATE people SET full_name = 'Person Three', modified_s = ${now} WHERE pid = 3`,
    ])
    const before = await lastRequestId(tsb.sandbox, app.id)
    const delta = await runCli(['run', '--delta', '--config', cfg, '--json']).done
    expect(delta.code, delta.stderr.slice(-3000)).toBe(0)
    expect(delta.stderr).toMatch(/CONFLICT \(changed on the platform, not applied\)/)
    const sent = await receivedSince(tsb.sandbox, app.id, before)
    expect(sent.writes).toEqual([`users.update ${users.get('3')?.key}`])
    expect((await app.client.getGroup(r1)).name).toBe('Renamed on the platform')
    expect(await updates()).toEqual(expect.arrayContaining(['message.edit 1 conflict', 'group.update r1 conflict', 'user.update 3 done']))
    const summary = JSON.parse(delta.stdout) as { updates: Record<string, { conflict: number }> }
    expect(summary.updates['message.edit']?.conflict).toBe(1)
    expect(summary.updates['group.update']?.conflict).toBe(1)

    const status = await runCli(['status', '--config', cfg]).done
    expect(status.code, status.stderr).toBe(0)
    expect(status.stdout).toContain('CONFLICTS: 2 update(s) not applied')
    expect(status.stdout).toContain(`group.update legacy id r1 → ${r1}`)
    expect(status.stdout).toContain(`message.edit legacy id 1 → ${msg?.key}`)
    const statusJson = JSON.parse((await runCli(['status', '--config', cfg, '--json']).done).stdout) as { updates: { conflicts: unknown[] } }
    expect(statusJson.updates.conflicts).toHaveLength(2)

    // The operator decides the source wins: the held-back updates are planned again and applied once.
    const winCfg = configWith({ conflicts: 'source-wins' })
    const replanned = await runCli(['retry-rejected', '--conflicts', '--config', winCfg]).done
    expect(replanned.code, replanned.stderr).toBe(0)
    expect(replanned.stdout).toContain('2 update(s) held back by a conflict planned again')
    const before2 = await lastRequestId(tsb.sandbox, app.id)
    const load = await runCli(['load', '--config', winCfg]).done
    expect(load.code, load.stderr.slice(-3000)).toBe(0)
    expect((await receivedSince(tsb.sandbox, app.id, before2)).writes).toEqual([`groups.update ${r1}`, `messages.update ${msg?.platformId}`].sort())
    expect((await app.client.getGroup(r1)).name).toBe('Renamed in the source')
    // chatferry's own writes come back as deliveries too: they are its echo, not a platform change.
    await waitFor('the echoes', async () => ((await events()).filter((e) => e.origin === 'chatferry').length >= 2 ? true : undefined))
  }, 120_000)

  it('a change made while the receiver is down arrives on the retry, and the next delta still refuses to overwrite it', async () => {
    await stopReceiver()
    const users = await ledgerKeys(state.url, jobId, 'users')
    const messages = await ledgerKeys(state.url, jobId, 'messages')
    const msg = messages.get('2')
    const seen = (await events()).length
    // While the receiver is down, its port answers 503 to every attempt, and the first one is
    // seen before the receiver starts again (however slow a loaded machine is to make it).
    const firstAttempt = Promise.withResolvers<void>()
    const down = createHttpServer((_req, res) => {
      firstAttempt.resolve()
      res.writeHead(503).end()
    })
    await new Promise<void>((resolve) => down.listen(port, '127.0.0.1', resolve))
    await app.client.updateMessage(msg?.platformId as string, { data: { text: 'edited while nobody listened' } }, users.get('2')?.key)
    await firstAttempt.promise
    await new Promise<void>((resolve) => down.close(() => resolve()))
    receiver = startReceiver()
    await receiver.waitFor('"listening"', 30_000)
    // The first attempt failed (503); a retry (5 s, then 20 s later) reaches the receiver.
    await waitFor('the retried delivery', async () => ((await events()).length > seen ? true : undefined), 40_000)
    // The delivery's row is written once it ends: wait for it, then it counts every attempt.
    const delivery = await waitFor('the delivery recorded', async () =>
      (await tsb.sandbox.deliveries(app.id)).find((d) => d.trigger === 'message_edited' && d.status === 'delivered' && d.attempts > 1),
    )
    expect(delivery.attempts).toBeGreaterThan(1)
    const now = Math.floor(Date.now() / 1000)
    await source_([`UPDATE lines SET body = 'source edit of line 2', edited_s = ${now}, modified_s = ${now} WHERE lid = 2`])
    const before = await lastRequestId(tsb.sandbox, app.id)
    const delta = await runCli(['run', '--delta', '--config', cfg]).done
    expect(delta.code, delta.stderr.slice(-3000)).toBe(0)
    expect((await receivedSince(tsb.sandbox, app.id, before)).writes).toEqual([])
    expect(await updates()).toContain('message.edit 2 conflict')
  }, 90_000)

  it('the update lane checks again just before it sends: an event stored after the intent was recorded holds it back', async () => {
    const groups = await ledgerKeys(state.url, jobId, 'groups')
    const r2 = groups.get('r2')?.key as string
    const store = await openLedger({ url: state.url })
    try {
      // A delta recorded a rename of r2 while no platform change was known…
      const recorded = await store.updatePlan.record(jobId, 'groups', [
        { kind: 'group.update', legacyId: 'r2', targetKey: r2, body: { name: 'Ops renamed in the source' }, policy: 'apply', reason: 'name' },
      ])
      expect(recorded.planned).toBe(1)
      // …then a member of r2 renamed it on the platform and the receiver stored the delivery.
      await app.client.updateGroup(r2, { name: 'Ops renamed there' })
      await waitFor('the delivery', async () =>
        (await events()).some((e) => e.platform_key === r2 && e.trigger === 'group_updated' && e.origin === 'platform') ? true : undefined,
      )
      const before = await lastRequestId(tsb.sandbox, app.id)
      const lane = await runLaneOnce({ store, jobId, appId: app.id, baseUrl: app.baseUrl, apiKey: app.apiKey, conflicts: 'platform-wins' })
      expect(lane.counters.heldBack).toEqual({ 'group.update': 1 })
      expect((await receivedSince(tsb.sandbox, app.id, before)).writes).toEqual([])
      expect(await updates()).toContain('group.update r2 dropped')
      expect((await app.client.getGroup(r2)).name).toBe('Ops renamed there')
    } finally {
      await store.close()
    }
    await stopReceiver()
  }, 60_000)
})
