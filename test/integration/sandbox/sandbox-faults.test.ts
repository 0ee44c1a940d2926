/**
 * Every injected fault, observed from the client's side and in the request log; seeded faults are
 * deterministic.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { PlatformError } from '../../../src/target/errors.ts'
import { importRaw, mgmtRaw, startTestSandbox, type TestApp, type TestSandbox } from '../../helpers/sandbox.ts'

let t: TestSandbox

beforeAll(async () => {
  t = await startTestSandbox()
})
afterAll(async () => {
  await t?.close()
})

const users = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => ({ uid: `${prefix}${i}`, name: `U${i}` }))

async function storedUids(app: TestApp): Promise<string[]> {
  const rows = await t.sandbox.store.selectFrom('users').select('uid').where('app_id', '=', app.id).orderBy('uid').execute()
  return rows.map((r) => r.uid)
}

describe('faults', () => {
  it('extra429: 429 under the limit, not processed, not counted, logged', async () => {
    // Reads the wait and the budget from the headers, so it asks for them.
    const app = await t.app({ rateLimitHeaders: true, faults: { extra429: 1, seed: 1 } })
    const err = await app.client.importUsers(users('a', 3)).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(PlatformError)
    expect(err).toMatchObject({ status: 429, code: 'ERR_TOO_MANY_REQUESTS', retryable: true, retryAfterMs: 1000 })
    expect(await storedUids(app)).toEqual([])
    await t.sandbox.settings(app.id, { faults: { extra429: 0 } })
    const ok = await importRaw(app, 'users', { users: { b: { uid: 'b', name: 'B' } } })
    // The faulted request did not use up the budget.
    expect(ok.headers.get('x-ratelimit-remaining')).toBe('59')
    const log = await t.sandbox.requests(app.id)
    expect(log[0]).toMatchObject({ endpoint: 'users', status: 429, code: 'ERR_TOO_MANY_REQUESTS', fault: 'extra429', committed: 0 })
    expect(log[1]).toMatchObject({ status: 200, fault: null, committed: 1, itemCount: 1 })
  })

  it('partialCommit500: a non-empty proper subset is written, then 500 ERR_EXCEPTION without per-item results', async () => {
    const app = await t.app({ faults: { partialCommit500: 1, seed: 7 } })
    const err = await app.client.importUsers(users('p', 10)).catch((e: unknown) => e)
    expect(err).toMatchObject({ status: 500, code: 'ERR_EXCEPTION', retryable: true })
    const written = await storedUids(app)
    expect(written.length).toBeGreaterThanOrEqual(1)
    expect(written.length).toBeLessThanOrEqual(9)
    const [entry] = await t.sandbox.requests(app.id)
    expect(entry).toMatchObject({ status: 500, code: 'ERR_EXCEPTION', fault: 'partialCommit500', committed: written.length, itemCount: 10 })
    // Re-sending the batch (as the docs advise) reports the written items as already there.
    await t.sandbox.settings(app.id, { faults: { partialCommit500: 0 } })
    const again = await app.client.importUsers(users('p', 10))
    const exists = [...again.results].filter(([, r]) => !r.ok && r.code === 'ERR_UID_ALREADY_EXISTS').map(([k]) => k)
    expect(exists.sort()).toEqual(written)
    expect(await storedUids(app)).toHaveLength(10)
  })

  it('partialCommit500 with partialCommitShape prefix: the first 0 to n−1 items in request order are written, then 500', async () => {
    const app = await t.app({ faults: { partialCommit500: 1, partialCommitShape: 'prefix', seed: 3 } })
    const counts: number[] = []
    for (let round = 0; round < 6; round++) {
      const batch = users(`r${round}p`, 10)
      const err = await app.client.importUsers(batch).catch((e: unknown) => e)
      expect(err).toMatchObject({ status: 500, code: 'ERR_EXCEPTION' })
      const written = (await storedUids(app)).filter((u) => u.startsWith(`r${round}p`))
      // A prefix of the request: the first k uids, k < 10.
      expect(written).toEqual(
        batch
          .slice(0, written.length)
          .map((u) => u.uid)
          .sort(),
      )
      expect(written.length).toBeLessThan(10)
      counts.push(written.length)
    }
    expect(new Set(counts).size, `prefix lengths ${counts.join(', ')}`).toBeGreaterThan(1)
  })

  it('partialCommit500 never strikes a request of one item (a 500 to one row alone is the platform’s word about it)', async () => {
    const app = await t.app({ faults: { partialCommit500: 1, seed: 2 } })
    const res = await app.client.importUsers(users('solo', 1))
    expect([...res.results.values()].every((r) => r.ok)).toBe(true)
    expect((await t.sandbox.requests(app.id))[0]).toMatchObject({ status: 200, fault: null, committed: 1 })
  })

  it('partialCommit500 never writes items that would have failed', async () => {
    const app = await t.app({ faults: { partialCommit500: 1, seed: 3 } })
    const res = await importRaw(app, 'users', { users: { a: { uid: 'a', name: 'A' }, b: { uid: 'b' }, c: { uid: 'c', name: 'C' } } })
    expect(res.status).toBe(500)
    expect(res.body.error.code).toBe('ERR_EXCEPTION')
    expect(res.body.data).toBeUndefined()
    const written = await storedUids(app)
    expect(written).toHaveLength(1)
    expect(['a', 'c']).toContain(written[0])
  })

  it('seeded faults are deterministic: the same seed gives the same subset and the same sequence', async () => {
    const subsets: string[][] = []
    const sequences: number[][] = []
    for (let run = 0; run < 2; run++) {
      const app = await t.app({ faults: { partialCommit500: 1, seed: 99 } })
      await app.client.importUsers(users('d', 20)).catch(() => undefined)
      subsets.push(await storedUids(app))
      await t.sandbox.settings(app.id, { faults: { partialCommit500: 0, extra429: 0.5, seed: 1234 } })
      const statuses: number[] = []
      for (let i = 0; i < 12; i++) {
        statuses.push((await importRaw(app, 'users', { users: { [`s${i}`]: { uid: `s${i}`, name: 'S' } } })).status)
      }
      sequences.push(statuses)
    }
    expect(subsets[0]).toEqual(subsets[1])
    expect(sequences[0]).toEqual(sequences[1])
    expect(new Set(sequences[0])).toEqual(new Set([200, 429]))
  })

  it('dropBeforeCommit: the connection is destroyed, nothing is written, the client sees a retryable network error', async () => {
    const app = await t.app({ faults: { dropBeforeCommit: 1, seed: 5 } })
    const err = await app.client.importUsers(users('x', 2)).catch((e: unknown) => e)
    expect(err).toMatchObject({ kind: 'network', retryable: true })
    expect(await storedUids(app)).toEqual([])
    const [entry] = await t.sandbox.requests(app.id)
    expect(entry).toMatchObject({ status: null, fault: 'dropBeforeCommit', committed: 0 })
  })

  it('dropAfterCommit: everything is written, then the connection is destroyed without an answer', async () => {
    const app = await t.app({ faults: { dropAfterCommit: 1, seed: 5 } })
    const err = await app.client.importUsers(users('y', 3)).catch((e: unknown) => e)
    expect(err).toMatchObject({ kind: 'network', retryable: true })
    expect(await storedUids(app)).toEqual(['y0', 'y1', 'y2'])
    const [entry] = await t.sandbox.requests(app.id)
    expect(entry).toMatchObject({ status: null, fault: 'dropAfterCommit', committed: 3, itemCount: 3 })
  })

  it('latencyMs adds a delay drawn from [min, max], visible in the log', async () => {
    const app = await t.app({ faults: { latencyMs: { min: 120, max: 150 }, seed: 2 } })
    const started = Date.now()
    await app.client.importUsers(users('l', 1))
    expect(Date.now() - started).toBeGreaterThanOrEqual(120)
    const [entry] = await t.sandbox.requests(app.id)
    expect(entry?.latencyMs).toBeGreaterThanOrEqual(120)
    expect(entry?.latencyMs).toBeLessThanOrEqual(150)
    expect(entry?.durationMs).toBeGreaterThanOrEqual(120)
  })

  it('the request log is readable over HTTP with received-at, endpoint, item count, status and fault', async () => {
    const app = await t.app()
    await app.client.importUsers(users('h', 2))
    await importRaw(app, 'groups', { groups: {} })
    const res = await mgmtRaw(t.sandbox, `/sandbox/apps/${app.id}/requests`)
    expect(res.status).toBe(200)
    expect(res.body.data).toEqual([
      expect.objectContaining({
        endpoint: 'users',
        itemCount: 2,
        status: 200,
        fault: null,
        receivedAtMs: expect.any(Number),
        path: `/apps/${app.id}/v3/data_import/users`,
      }),
      expect.objectContaining({ endpoint: 'groups', itemCount: null, status: 400, code: 'ERR_IMPORT_INVALID_GROUP_FORMAT' }),
    ])
  })
})
