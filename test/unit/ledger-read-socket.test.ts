import { mkdtempSync, statSync } from 'node:fs'
import { createConnection } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { expect, it } from 'vitest'

import { connectReadSocket, type LedgerAnswers, serveReadSocket } from '../../src/cli/ledger-read-socket.ts'

const started = new Date('2026-11-24T07:00:00Z')
const saved: unknown[] = []
const reader: LedgerAnswers = {
  listJobs: async () => [{ id: 'j', appId: 'a' }],
  entityStats: async () => [],
  fileCounts: async () => ({ planned: 1, copied: 2, failed: 0, skipped: 0, copiedBytes: 10, plannedBytes: 5, failedWaiting: 0, waitingMessages: 1 }),
  listFiles: async () => [],
  listRejects: async (jobId, filter) => [
    {
      entity: 'users',
      legacyId: `${jobId}:${filter?.code ?? '-'}`,
      targetKey: 'k',
      code: filter?.code ?? null,
      message: null,
      attempts: 1,
      updatedAt: started,
      resendable: true,
    },
  ],
  listAcceptedRejects: async (jobId) => [
    {
      entity: 'messages',
      legacyId: `${jobId}:m1`,
      targetKey: '~legacy:m1',
      code: 'MAPPING_INVALID',
      message: 'receiver is missing',
      reason: 'lines without a room',
      acceptedBy: 'ops@host',
      acceptedAt: started,
    },
  ],
  listRuns: async () => {
    throw new Error('the ledger could not be read')
  },
  openMessagesPerMinute: async () => [[29_000_000, 3]],
  listUpdateRejects: async (jobId) => [
    {
      entity: 'users',
      kind: 'user.update',
      legacyId: `${jobId}:u1`,
      targetKey: 'u1',
      code: 'ERR_BAD_REQUEST',
      message: 'name too long',
      httpStatus: 400,
      attempts: 0,
      settledAt: started,
    },
  ],
  updateConflicts: async (jobId, args) => [
    {
      entity: 'groups',
      kind: 'group.update',
      legacyId: `${jobId}:g1`,
      targetKey: 'g1',
      status: 'conflict',
      reason: `name; changed on the platform (limit ${args.limit})`,
      settledAt: started,
    },
  ],
  updateCounts: async () => [{ entity: 'users', kind: 'user.update', policy: 'apply', status: 'planned', n: 2 }],
  idMap: async (jobId) => [{ kind: 'user', legacyId: `${jobId}-1`, platformId: 'u1' }],
  lookupItems: async () => [],
  knownItems: async (_jobId, entity, keys, hashes) =>
    keys.map((k, i) => ({
      target_key: `${entity}:${k}`,
      status: 'done',
      payload_hash: hashes[i] ?? null,
      loaded_hash: null,
      payload: null,
      vanished: false,
    })),
  // A report's own fields named like dates stay as written.
  latestReport: async (jobId, kind) => ({ jobId, kind, updatedAt: '2026-11-24T07:00:00.000Z' }),
  savePlanReport: async (report) => void saved.push(report),
  chatBudgetEnsure: async () => {},
  chatBudgetReserve: async (_key, n, intervalMs) => ({ slotMs: n * intervalMs, nowMs: 0, tatMs: (n + 1) * intervalMs }),
  chatBudgetPause: async () => {},
  loadedItems: async (_jobId, _entity, legacyIds) => legacyIds.map((id) => ({ legacyId: id, targetKey: `k-${id}`, payload: null })),
}

it('answers the read-only operations with their dates, passes errors on, refuses anything else, and hangs up on readers when it stops', async () => {
  const path = join(mkdtempSync(join(tmpdir(), 'cf-sock-')), 'chatferry.sock')
  const stop = await serveReadSocket(reader, path)
  expect(statSync(path).mode & 0o777).toBe(0o600)
  const client = await connectReadSocket(path)
  expect(await client.listJobs()).toEqual([{ id: 'j', appId: 'a' }])
  const [reject] = await client.listRejects('j', { code: 'X' })
  expect(reject).toMatchObject({ legacyId: 'j:X', code: 'X' })
  expect(reject!.updatedAt).toEqual(started)
  const [accepted] = await client.listAcceptedRejects('j')
  expect(accepted).toMatchObject({ legacyId: 'j:m1', reason: 'lines without a room', acceptedBy: 'ops@host' })
  expect(accepted!.acceptedAt).toEqual(started)
  await expect(client.listRuns('j')).rejects.toThrow('the ledger could not be read')
  const [refused] = await client.listUpdateRejects('j')
  expect(refused).toMatchObject({ kind: 'user.update', legacyId: 'j:u1', code: 'ERR_BAD_REQUEST', httpStatus: 400 })
  expect(refused!.settledAt).toEqual(started)
  expect(await client.updateCounts('j')).toEqual([{ entity: 'users', kind: 'user.update', policy: 'apply', status: 'planned', n: 2 }])
  const [held] = await client.updateConflicts('j', { limit: 7, withDropped: false })
  expect(held).toMatchObject({ legacyId: 'j:g1', targetKey: 'g1', status: 'conflict', reason: 'name; changed on the platform (limit 7)' })
  expect(held?.settledAt).toEqual(started)
  // What plan asks: arrays of strings go and come back as they are.
  expect(await client.idMap('j')).toEqual([{ kind: 'user', legacyId: 'j-1', platformId: 'u1' }])
  expect(await client.knownItems('j', 'users', ['a', 'b'], ['h1', 'h2'])).toMatchObject([
    { target_key: 'users:a', payload_hash: 'h1' },
    { target_key: 'users:b', payload_hash: 'h2' },
  ])
  expect(await client.latestReport('j', 'plan')).toEqual({ jobId: 'j', kind: 'plan', updatedAt: '2026-11-24T07:00:00.000Z' })
  expect(await client.loadedItems('j', 'messages', ['m1'])).toEqual([{ legacyId: 'm1', targetKey: 'k-m1', payload: null }])
  await client.savePlanReport({ kind: 'plan', runId: 'r1' })
  expect(saved).toEqual([{ kind: 'plan', runId: 'r1' }])

  // A write is not on the list, whatever a client sends.
  const raw = createConnection(path)
  raw.on('error', () => {})
  const answer = await new Promise<string>((resolve) => {
    raw.on('data', (d) => resolve(d.toString()))
    raw.write(`${JSON.stringify({ id: 7, op: 'retryRejected', args: ['j'] })}\n`)
  })
  expect(JSON.parse(answer)).toEqual({ id: 7, ok: false, error: 'not a read-only ledger operation: retryRejected' })

  // Two readers still connected do not keep the holder from closing.
  const t0 = Date.now()
  await stop()
  expect(Date.now() - t0).toBeLessThan(2000)
  await expect(client.listJobs()).rejects.toThrow(/closed|EPIPE|ECONNRESET/)
  raw.destroy()
})
