import { mkdtempSync, statSync } from 'node:fs'
import { createConnection } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { expect, it } from 'vitest'

import type { StatusReadings, StatusRequest } from '../../../src/cli/status-readings.ts'
import { askStatus, serveStatusSocket, statusSocketPath } from '../../../src/cli/status-socket.ts'

const started = new Date('2026-11-24T07:00:00Z')

/** What a holder's ledger would answer, naming the request it was asked. */
function readingsFor(req: StatusRequest): StatusReadings {
  if (req.jobId === 'broken') {
    throw new Error('the ledger could not be read')
  }
  return {
    jobs: [{ id: req.jobId, appId: 'a' }],
    entityStats: [],
    runs: [
      {
        id: req.runs,
        jobId: req.jobId,
        mode: 'load',
        status: 'running',
        owner: 'h/1/x',
        startedAt: started,
        heartbeatAt: started,
        finishedAt: null,
        stats: null,
        error: null,
      },
    ],
    openMessagesPerMinute: [[29_000_000, 3]],
    updateCounts: [{ entity: 'users', kind: 'user.update', policy: 'apply', status: 'conflict', n: 2 }],
    updateConflicts: [
      { entity: 'users', kind: 'user.update', legacyId: 'u1', targetKey: 'u1', status: 'conflict', reason: 'name; changed', settledAt: started },
    ],
    fileCounts: { planned: 1, copied: 2, failed: 0, skipped: 0, copiedBytes: 10, plannedBytes: 5, failedWaiting: 0, waitingMessages: 1 },
    rejects: Array.from({ length: req.rejects }, (_, i) => ({
      entity: 'messages' as const,
      legacyId: `m${i}`,
      targetKey: `k${i}`,
      code: 'MAPPING_INVALID',
      message: 'no sender',
      attempts: 1,
      updatedAt: started,
      resendable: false,
    })),
  }
}

it('puts the socket beside the lock, or in the temporary directory when the path would be too long', () => {
  expect(statusSocketPath('/data/.chatferry')).toBe('/data/.chatferry/chatferry.sock')
  const deep = `/data/${'x'.repeat(120)}/.chatferry`
  expect(statusSocketPath(deep)).toMatch(/\/chatferry-[0-9a-f]{16}\.sock$/)
  expect(statusSocketPath(deep)).toBe(statusSocketPath(deep))
})

it('answers a status request with its dates, passes errors on, refuses anything else, and hangs up on readers when it stops', async () => {
  const path = join(mkdtempSync(join(tmpdir(), 'cf-sock-')), 'chatferry.sock')
  const stop = await serveStatusSocket(async (req) => readingsFor(req), path)
  expect(statSync(path).mode & 0o777).toBe(0o600)

  const got = await askStatus(path, { jobId: 'j', runs: 5, rejects: 2 })
  expect(got.jobs).toEqual([{ id: 'j', appId: 'a' }])
  expect(got.runs[0]).toMatchObject({ id: 5, status: 'running', finishedAt: null })
  expect(got.runs[0]!.startedAt).toEqual(started)
  expect(got.runs[0]!.heartbeatAt).toEqual(started)
  expect(got.updateConflicts[0]!.settledAt).toEqual(started)
  expect(got.rejects.map((r) => r.legacyId)).toEqual(['m0', 'm1'])
  expect(got.rejects[1]!.updatedAt).toEqual(started)
  expect(got.openMessagesPerMinute).toEqual([[29_000_000, 3]])
  expect(got.fileCounts.copied).toBe(2)

  await expect(askStatus(path, { jobId: 'broken', runs: 5, rejects: 0 })).rejects.toThrow('the ledger could not be read')
  // Only a status request of bounded size is read: nothing else, whatever a client sends.
  await expect(askStatus(path, { jobId: 'j', runs: 5, rejects: 1_000_000 })).rejects.toThrow('not a status request')
  const raw = createConnection(path)
  raw.on('error', () => {})
  const answer = await new Promise<string>((resolve) => {
    let text = ''
    raw.on('data', (d) => (text += d.toString()))
    raw.on('end', () => resolve(text))
    raw.write(`${JSON.stringify({ op: 'retryRejected', args: ['j'] })}\n`)
  })
  expect(JSON.parse(answer)).toEqual({ ok: false, error: 'not a status request' })

  // A reader connected without asking does not keep the holder from closing.
  const idle = createConnection(path)
  idle.on('error', () => {})
  await new Promise((r) => idle.once('connect', r))
  const t0 = Date.now()
  await stop()
  expect(Date.now() - t0).toBeLessThan(2000)
  await expect(askStatus(path, { jobId: 'j', runs: 5, rejects: 0 })).rejects.toThrow(/ENOENT|ECONNREFUSED/)
})
