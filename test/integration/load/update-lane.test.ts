/**
 * The update lane against the sandbox over HTTP, with the ledger on Postgres: items imported by the
 * loader, then update intents recorded as a delta run records them, then the lane. What the sandbox
 * *received* (its request log) must be exactly the expected chat writes, each once, and nothing
 * else; the platform's state (read back through the chat interface) must be the desired one; a
 * refusal is rejected with its code and the run goes on; a message loaded without a recorded
 * platform id is found by its legacy id, one the platform does not hold is rejected
 * `MESSAGE_NOT_ON_PLATFORM`; an update left `sent` by a crash is checked, not sent again, when the
 * platform already has it; the lane's failed ledger operations (a trigger makes the ledger refuse
 * them, or a fault in front of the store loses a committed claim's answer) are counted, an update
 * whose settlement failed is checked, not sent again, and the loop's operations are retried through
 * a transient error until `load.giveUpAfterMs`, each update still applied once, while a permanent
 * one ends the lane at once.
 */
import { sql } from 'kysely'
import { expect, it } from 'vitest'

import { inspectLedger } from '../../../src/state/inspect-ledger.ts'
import type { PlannedItem } from '../../../src/state/store.ts'
import type { UpdateIntent } from '../../../src/state/update-plan-ledger.ts'
import { createPlatformClient } from '../../../src/target/client.ts'
import { startHoldingProxy } from '../../helpers/holding-proxy.ts'
import { connectionReset, failOnce, refuseLedgerWrites } from '../../helpers/ledger-faults.ts'
import { groups, members, messages, users } from '../../helpers/ledger-fixtures.ts'
import { loadOnce, useLoaderFixture } from '../../helpers/loader-harness.ts'
import { testSecret } from '../../helpers/secrets.ts'
import { duplicates, ledgerUpdates, messageIds, receivedWrites, runLaneOnce } from '../../helpers/update-lane-harness.ts'

const fx = useLoaderFixture('cf_lane')

const intent = (o: Partial<UpdateIntent> & Pick<UpdateIntent, 'kind' | 'targetKey'>): UpdateIntent => ({
  legacyId: `legacy-${o.targetKey}`,
  body: {},
  policy: 'apply',
  reason: 'test',
  payloadHash: `h-${o.targetKey}`,
  ...o,
})

/** Messages m0…m4 (direct messages between u0…u4), each with its legacy id in data.metadata.legacy. */
function legacyMessages(): PlannedItem[] {
  return messages(5, 5).map((m, i) => {
    const p = m.payload as { data: { text: string } }
    return { ...m, payload: { ...p, data: { ...p.data, metadata: { legacy: { id: String(i) } } } } }
  })
}

async function importedJob(jobId: string, settings: { chatRequestsPerMinute?: number; windowMs?: number } = {}) {
  const app = await fx.sb.createApp({ id: jobId, apiKey: testSecret('apikey'), settings: { requestsPerMinute: 6000, ...settings } })
  await fx.store.ensureJob(jobId, app.id)
  await fx.store.planItems(jobId, 'users', users(5))
  await fx.store.planItems(jobId, 'groups', groups(2))
  await fx.store.planItems(jobId, 'members', members(5, 2))
  await fx.store.planItems(jobId, 'messages', legacyMessages())
  const loaded = await loadOnce({
    store: fx.store,
    stateUrl: fx.tdb.url,
    jobId,
    appId: app.id,
    baseUrl: app.baseUrl,
    apiKey: app.apiKey,
    requestsPerMinute: 6000,
  })
  expect(loaded.status).toBe('done')
  return app
}

it('applies each recorded update with one call, rejects refusals with their code, and leaves the platform in the desired state', async () => {
  const jobId = 'lane'
  const app = await importedJob(jobId)
  const ids = await messageIds(fx.sb, app.id)
  const db = inspectLedger(fx.store)
  // The loader recorded every created message's platform id from its import answer.
  const recorded = (
    await sql<{
      k: string
      p: string
    }>`select target_key as k, platform_id as p from chatferry.items where job_id = ${jobId} and entity = 'messages'`.execute(db)
  ).rows
  expect(new Map(recorded.map((r) => [r.k, r.p]))).toEqual(ids)
  // m3 as if loaded before platform ids were recorded: found through the chat list by its legacy id.
  await sql`update chatferry.items set platform_id = null where job_id = ${jobId} and target_key = 'm3'`.execute(db)
  // m9: a done item the platform never received. Its own text, so that its fingerprint (sender,
  // receiver, sentAt second, text) cannot equal m0's when both are made within one second.
  const m9 = messages(1, 5, 'm9')[0]!
  await fx.store.planItems(jobId, 'messages', [
    { ...m9, targetKey: 'm9', legacyId: '9', payload: { ...(m9.payload as Record<string, unknown>), data: { text: 'never imported' } } },
  ])
  await sql`update chatferry.items set status = 'done', loaded_hash = payload_hash where job_id = ${jobId} and target_key = 'm9'`.execute(db)

  await fx.store.updatePlan.record(jobId, 'users', [
    intent({ kind: 'user.update', targetKey: 'u1', body: { name: 'Renamed One' } }),
    intent({ kind: 'user.deactivate', targetKey: 'u2' }),
  ])
  await fx.store.updatePlan.record(jobId, 'groups', [intent({ kind: 'group.update', targetKey: 'g0', body: { name: 'Group 0', type: 'private' } })])
  await fx.store.updatePlan.record(jobId, 'members', [
    intent({ kind: 'member.scope', targetKey: 'g1_member_u1', body: { scope: 'moderator' } }),
    intent({ kind: 'member.kick', targetKey: 'g0_member_u4' }),
    intent({ kind: 'member.ban', targetKey: 'g1_member_u3' }),
    intent({ kind: 'member.add', targetKey: 'g1_member_u4', body: { scope: 'participant' } }),
    // u3 is no member of g0: the platform refuses.
    intent({ kind: 'member.scope', targetKey: 'g0_member_u3', body: { scope: 'admin' } }),
  ])
  await fx.store.updatePlan.record(jobId, 'messages', [
    intent({ kind: 'message.edit', targetKey: 'm0', body: { sender: 'u0', data: { text: 'edited 0', metadata: { legacy: { id: '0' } } } } }),
    intent({ kind: 'message.delete', targetKey: 'm1', body: { sender: 'u1' } }),
    intent({ kind: 'message.edit', targetKey: 'm3', body: { sender: 'u3', data: { text: 'edited 3', metadata: { legacy: { id: '3' } } } } }),
    intent({ kind: 'message.edit', targetKey: 'm9', body: { sender: 'u4', data: { text: 'nowhere' } } }),
  ])

  // A client timeout long enough for a loaded CI machine: this test is about the calls, and a
  // timed-out refusal would be sent again after its check (timeouts have their own tests below).
  const out = await runLaneOnce({ store: fx.store, jobId, appId: app.id, baseUrl: app.baseUrl, apiKey: app.apiKey, timeoutMs: 20_000 })
  expect(out.status, out.error?.message).toBe('rejected')
  expect(out.counters.done).toEqual({
    'user.update': 1,
    'user.deactivate': 1,
    'group.update': 1,
    'member.scope': 1,
    'member.kick': 1,
    'member.ban': 1,
    'member.add': 1,
    'message.edit': 2,
    'message.delete': 1,
  })
  expect(out.counters.rejected).toEqual({ 'member.scope': 1, 'message.edit': 1 })

  const writes = await receivedWrites(fx.sb, app.id)
  expect(duplicates(writes)).toEqual([])
  expect(writes.map((w) => w.call).sort()).toEqual(
    [
      'users.update u1',
      'users.deactivate u2',
      'groups.update g0',
      'members.scope g1_member_u1',
      'members.kick g0_member_u4',
      'members.ban g1_member_u3',
      'members.add g1_member_u4',
      'members.scope g0_member_u3',
      `messages.update ${ids.get('m0')}`,
      `messages.delete ${ids.get('m1')}`,
      `messages.update ${ids.get('m3')}`,
    ].sort(),
  )

  // The platform's state, read back through the chat interface.
  const client = createPlatformClient({ baseUrl: app.baseUrl, apiKey: app.apiKey })
  expect((await client.findUser('u1'))?.name).toBe('Renamed One')
  expect((await client.findUser('u2'))?.deactivatedAt).toBeDefined()
  expect(await client.getGroup('g0')).toMatchObject({ name: 'Group 0', type: 'private' })
  expect(await client.findGroupMember('g1', 'u1')).toMatchObject({ state: 'member', member: { scope: 'moderator' } })
  expect((await client.findGroupMember('g0', 'u4')).state).toBe('none')
  expect((await client.findGroupMember('g1', 'u3')).state).toBe('banned')
  expect(await client.findGroupMember('g1', 'u4')).toMatchObject({ state: 'member', member: { scope: 'participant' } })
  expect((await client.getMessage(ids.get('m0')!)).data?.text).toBe('edited 0')
  expect((await client.getMessage(ids.get('m1')!)).deletedAt).toBeDefined()
  expect((await client.getMessage(ids.get('m3')!)).data?.text).toBe('edited 3')

  // The ledger: the refusals with their codes, m3's platform id found and kept, u1 loaded unchanged.
  const rejects = await fx.store.updateLane.rejects(jobId)
  expect(rejects.map((r) => [r.kind, r.targetKey, r.code])).toEqual([
    ['member.scope', 'g0_member_u3', expect.stringMatching(/^ERR_/)],
    ['message.edit', 'm9', 'MESSAGE_NOT_ON_PLATFORM'],
  ])
  expect(rejects[0]?.httpStatus).toBeGreaterThanOrEqual(400)
  const m3 = (await sql<{ p: string }>`select platform_id as p from chatferry.items where job_id = ${jobId} and target_key = 'm3'`.execute(db))
    .rows[0]
  expect(m3?.p).toBe(ids.get('m3'))
  const u1 = (await sql<{ h: string }>`select loaded_hash as h from chatferry.items where job_id = ${jobId} and target_key = 'u1'`.execute(db))
    .rows[0]
  expect(u1?.h).toBe('h-u1')

  // Nothing left: a second lane sends nothing.
  const again = await runLaneOnce({ store: fx.store, jobId, appId: app.id, baseUrl: app.baseUrl, apiKey: app.apiKey })
  expect(again.counters.requests).toBe(0)
  expect(await receivedWrites(fx.sb, app.id)).toHaveLength(writes.length)
}, 60_000)

it('an update found sent after a crash is checked first: settled without a call when the platform has it, sent when it does not', async () => {
  const jobId = 'ambiguous'
  const app = await importedJob(jobId)
  const client = createPlatformClient({ baseUrl: app.baseUrl, apiKey: app.apiKey })
  // What a crash between the call and its settlement leaves: u1's rename reached the platform, u0's did not.
  await client.updateUser('u1', { name: 'Applied Before The Crash' })
  await fx.store.updatePlan.record(jobId, 'users', [
    intent({ kind: 'user.update', targetKey: 'u0', body: { name: 'Never Arrived' } }),
    intent({ kind: 'user.update', targetKey: 'u1', body: { name: 'Applied Before The Crash' } }),
  ])
  await sql`update chatferry.updates set status = 'sent', sent_at = now(), lease_owner = 'gone/1/x', lease_expires_at = now() - interval '1 second' where job_id = ${jobId}`.execute(
    inspectLedger(fx.store),
  )
  const before = (await receivedWrites(fx.sb, app.id)).length
  const out = await runLaneOnce({ store: fx.store, jobId, appId: app.id, baseUrl: app.baseUrl, apiKey: app.apiKey })
  expect(out.status).toBe('done')
  expect(out.counters.confirmed).toBe(1)
  const writes = (await receivedWrites(fx.sb, app.id)).slice(before)
  expect(writes.map((w) => w.call)).toEqual(['users.update u0'])
  expect((await client.findUser('u0'))?.name).toBe('Never Arrived')
  expect((await ledgerUpdates(fx.store, jobId)).map((u) => [u.target_key, u.status, u.http_status])).toEqual([
    ['u0', 'done', 200],
    ['u1', 'done', null],
  ])
}, 60_000)

it("the lane's failed ledger operations are counted and ridden out: a failed settlement is retried once its lease ends (checked, not sent again), a loop operation with backoff", async () => {
  const jobId = 'ledgerfail'
  const app = await importedJob(jobId)
  await fx.store.updatePlan.record(jobId, 'users', [
    intent({ kind: 'user.update', targetKey: 'u0', body: { name: 'Settled Late' } }),
    intent({ kind: 'user.update', targetKey: 'u1', body: { name: 'Settled At Once' } }),
  ])
  // u0's rename reaches the platform; its settlement `done` fails once and it stays `sent` under its lease.
  const settleRefused = await refuseLedgerWrites(fx.store, 'updates', jobId, "new.status = 'done' and new.target_key = 'u0'", 1, '40001')
  const lane = { store: fx.store, jobId, appId: app.id, baseUrl: app.baseUrl, apiKey: app.apiKey, timeoutMs: 2000, settings: { leaseSeconds: 5 } }
  try {
    const out = await runLaneOnce(lane)
    expect(out.status, out.error?.message).toBe('done')
    expect(out.counters).toMatchObject({ ledgerErrors: 1, confirmed: 1, done: { 'user.update': 2 } })
    const writes = await receivedWrites(fx.sb, app.id)
    expect(duplicates(writes)).toEqual([])
    expect(writes.map((w) => w.call).sort()).toEqual(['users.update u0', 'users.update u1'])
    expect((await ledgerUpdates(fx.store, jobId)).map((u) => [u.target_key, u.status, u.http_status])).toEqual([
      ['u0', 'done', null],
      ['u1', 'done', 200],
    ])
  } finally {
    await settleRefused()
  }

  // A ledger that refuses the claims three times with a serialization failure (40001, transient):
  // retried with backoff, each refusal counted, u2 applied once.
  await fx.store.updatePlan.record(jobId, 'users', [intent({ kind: 'user.update', targetKey: 'u2', body: { name: 'Claimed Late' } })])
  const claimRefused = await refuseLedgerWrites(fx.store, 'updates', jobId, 'new.lease_owner is distinct from old.lease_owner', 3, '40001')
  try {
    const out = await runLaneOnce(lane)
    expect(out.status, out.error?.message).toBe('done')
    expect(out.counters).toMatchObject({ ledgerErrors: 3, done: { 'user.update': 1 } })
  } finally {
    await claimRefused()
  }

  // A claim that committed but whose answer was lost (a connection reset after the commit), and a
  // failed look at dead holders' leases and at the drained updates: the claimed updates are held by
  // no one until their lease ends (5 s), then claimed again and applied once, never twice.
  await fx.store.updatePlan.record(jobId, 'users', [
    intent({ kind: 'user.update', targetKey: 'u3', body: { name: 'Claim Answer Lost' } }),
    intent({ kind: 'user.update', targetKey: 'u4', body: { name: 'Claim Answer Lost Too' } }),
  ])
  let lostClaim: number[] = []
  const ledger = fx.store.updateLane
  const updateLane = {
    ...ledger,
    claim: failOnce(ledger.claim, async (args) => {
      lostClaim = (await ledger.claim(args)).map((u) => u.id)
      return connectionReset()
    }),
    leased: failOnce(ledger.leased, connectionReset),
    drained: failOnce(ledger.drained, connectionReset),
  }
  const out = await runLaneOnce({ ...lane, store: { ...fx.store, updateLane } })
  expect(out.status, out.error?.message).toBe('done')
  expect(lostClaim).toHaveLength(2)
  expect(out.counters).toMatchObject({ ledgerErrors: 3, done: { 'user.update': 2 } })
  const writes = await receivedWrites(fx.sb, app.id)
  expect(duplicates(writes)).toEqual([])
  expect(writes.map((w) => w.call).sort()).toEqual(['u0', 'u1', 'u2', 'u3', 'u4'].map((u) => `users.update ${u}`))
  expect((await ledgerUpdates(fx.store, jobId)).slice(2).map((u) => [u.target_key, u.status, u.http_status])).toEqual([
    ['u2', 'done', 200],
    ['u3', 'done', 200],
    ['u4', 'done', 200],
  ])

  // A transient refusal (57P01, a server shutting down) that lasts past load.giveUpAfterMs ends the
  // lane (failed) with an error naming the operation; nothing is sent.
  await fx.store.updatePlan.record(jobId, 'users', [intent({ kind: 'user.update', targetKey: 'u5', body: { name: 'Never Claimed' } })])
  const claimsRefused = await refuseLedgerWrites(fx.store, 'updates', jobId, 'new.lease_owner is distinct from old.lease_owner', 1_000, '57P01')
  try {
    const before = (await receivedWrites(fx.sb, app.id)).length
    const out = await runLaneOnce({ ...lane, settings: { ...lane.settings, giveUpAfterMs: 2000 } })
    expect(out.status).toBe('failed')
    expect(out.error?.message).toMatch(
      /^the ledger kept failing while claiming updates: \d+ attempts in [\d.]+ s, the last: the ledger refused the write \(test\); gave up after load\.giveUpAfterMs = 2000 ms/,
    )
    expect(out.counters.ledgerErrors).toBeGreaterThanOrEqual(3)
    expect(await receivedWrites(fx.sb, app.id)).toHaveLength(before)
  } finally {
    await claimsRefused()
  }

  // A permanent error (P0001: a trigger's RAISE; a missing table, a denied permission or a bug alike)
  // ends the lane at once, long before load.giveUpAfterMs, counted once and naming the operation; u5 is not sent.
  const claimsBroken = await refuseLedgerWrites(fx.store, 'updates', jobId, 'new.lease_owner is distinct from old.lease_owner', 1_000, 'P0001')
  try {
    const before = (await receivedWrites(fx.sb, app.id)).length
    const startedAt = Date.now()
    const out = await runLaneOnce({ ...lane, settings: { ...lane.settings, giveUpAfterMs: 20_000 } })
    expect(out.status).toBe('failed')
    expect(out.error?.message).toMatch(
      /^the ledger failed while claiming updates, with an error no retry can fix \(P0001\): the ledger refused the write \(test\)\. Nothing was lost/,
    )
    expect(Date.now() - startedAt).toBeLessThan(3000)
    expect(out.counters.ledgerErrors).toBe(1)
    expect(await receivedWrites(fx.sb, app.id)).toHaveLength(before)
  } finally {
    await claimsBroken()
  }
}, 90_000)

const renames = (n: number): UpdateIntent[] =>
  users(n).map((u) => intent({ kind: 'user.update', targetKey: u.targetKey, body: { name: `Renamed ${u.targetKey}` } }))

it('a 429 from the chat interface pauses the chat budget and the same update goes again: each applied once', async () => {
  const jobId = 'limited'
  // The platform allows 4 chat calls per 2 s; the lane's budget thinks it may send 6000 a minute.
  const app = await importedJob(jobId, { chatRequestsPerMinute: 4, windowMs: 2000 })
  await fx.store.updatePlan.record(jobId, 'users', renames(5))
  const out = await runLaneOnce({ store: fx.store, jobId, appId: app.id, baseUrl: app.baseUrl, apiKey: app.apiKey })
  expect(out.status, out.error?.message).toBe('done')
  expect(out.counters.rateLimited).toBeGreaterThan(0)
  const applied = (await receivedWrites(fx.sb, app.id)).filter((w) => w.status === 200)
  expect(applied.map((w) => w.call).sort()).toEqual(
    users(5)
      .map((u) => `users.update ${u.targetKey}`)
      .sort(),
  )
  const pauses = await sql<{ pauses: number }>`select pauses from chatferry.quota_budgets where app_id = ${`${app.id}#chat`}`.execute(
    inspectLedger(fx.store),
  )
  expect(Number(pauses.rows[0]?.pauses)).toBeGreaterThan(0)
}, 60_000)

it('a timeout after the platform applied the call is checked, not sent again; a 503 the platform never saw is sent again', async () => {
  const jobId = 'flaky'
  const app = await importedJob(jobId)
  await fx.store.updatePlan.record(jobId, 'users', renames(3))
  const upstream = new URL(app.baseUrl)
  const proxy = await startHoldingProxy(upstream.origin, 4500)
  try {
    // u0's rename reaches the platform but its answer comes after the client's 3 s timeout; u1's
    // first call gets a 503 without reaching the platform.
    let heldOnce = false
    proxy.hold = (method, path) => method === 'PUT' && path.endsWith('/users/u0') && !heldOnce && (heldOnce = true)
    let failedOnce = false
    proxy.fail = (method, path) => (method === 'PUT' && path.endsWith('/users/u1') && !failedOnce && (failedOnce = true) ? 503 : undefined)
    const out = await runLaneOnce({ store: fx.store, jobId, appId: app.id, baseUrl: `${proxy.origin}${upstream.pathname}`, apiKey: app.apiKey })
    expect(out.status, out.error?.message).toBe('done')
    expect(out.counters.confirmed).toBe(1)
    const writes = await receivedWrites(fx.sb, app.id)
    expect(duplicates(writes)).toEqual([])
    expect(writes.map((w) => w.call).sort()).toEqual(['users.update u0', 'users.update u1', 'users.update u2'])
    expect((await ledgerUpdates(fx.store, jobId)).map((u) => [u.target_key, u.status, u.http_status])).toEqual([
      ['u0', 'done', null],
      ['u1', 'done', 200],
      ['u2', 'done', 200],
    ])
  } finally {
    await proxy.close()
  }
}, 60_000)

it('a request that reaches the platform after the client timed out is seen by the check, not sent again', async () => {
  const jobId = 'late'
  const app = await importedJob(jobId)
  const ids = await messageIds(fx.sb, app.id)
  await fx.store.updatePlan.record(jobId, 'messages', [
    intent({ kind: 'message.edit', targetKey: 'm0', body: { sender: 'u0', data: { text: 'edited late', metadata: { legacy: { id: '0' } } } } }),
  ])
  const upstream = new URL(app.baseUrl)
  // The edit reaches the sandbox 3.6 s after it was sent: the client gave up at 3 s, and a check
  // made at once would find the old text and send the edit a second time.
  const proxy = await startHoldingProxy(upstream.origin, 3600)
  try {
    let lateOnce = false
    proxy.late = (method, path) => method === 'PUT' && path.includes('/messages/') && !lateOnce && (lateOnce = true)
    const out = await runLaneOnce({ store: fx.store, jobId, appId: app.id, baseUrl: `${proxy.origin}${upstream.pathname}`, apiKey: app.apiKey })
    expect(out.status, out.error?.message).toBe('done')
    expect(lateOnce).toBe(true)
    await proxy.lateDone()
    const writes = await receivedWrites(fx.sb, app.id)
    expect(writes.map((w) => w.call)).toEqual([`messages.update ${ids.get('m0')}`])
    expect(out.counters, JSON.stringify(out.counters)).toMatchObject({ confirmed: 1, done: { 'message.edit': 1 } })
  } finally {
    await proxy.close()
  }
}, 60_000)

it('a message whose sender is deactivated on the platform is edited by the app instead (no onBehalfOf)', async () => {
  const jobId = 'departed'
  const app = await importedJob(jobId)
  const ids = await messageIds(fx.sb, app.id)
  const client = createPlatformClient({ baseUrl: app.baseUrl, apiKey: app.apiKey })
  // m2 was sent by u2, who left before this delta (deactivated by an earlier one).
  await client.deactivateUsers(['u2'])
  await fx.store.updatePlan.record(jobId, 'messages', [
    intent({
      kind: 'message.edit',
      targetKey: 'm2',
      body: { sender: 'u2', data: { text: 'edited after u2 left', metadata: { legacy: { id: '2' } } } },
    }),
  ])
  const out = await runLaneOnce({ store: fx.store, jobId, appId: app.id, baseUrl: app.baseUrl, apiKey: app.apiKey })
  expect(out.status, out.error?.message).toBe('done')
  const writes = (await receivedWrites(fx.sb, app.id)).filter((w) => w.call.startsWith('messages.'))
  // Refused on behalf of u2, then applied once by the app.
  expect(writes.map((w) => [w.call, w.status])).toEqual([
    [`messages.update ${ids.get('m2')}`, 404],
    [`messages.update ${ids.get('m2')}`, 200],
  ])
  const edited = await client.getMessage(ids.get('m2')!)
  expect(edited.data?.text).toBe('edited after u2 left')
  expect(edited.editedBy).toBe('app_system')
}, 60_000)
