/**
 * Issue 31: which notifications a run's end sends (src/job/notify/run-events.ts), and that what is
 * sent has the job's secrets scrubbed (src/job/notify/secrets.ts with the notifier's redaction).
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'

import { describe, expect, it } from 'vitest'

import { NotifySchema } from '../../../src/job/notify/config.ts'
import { createNotifier } from '../../../src/job/notify/notifier.ts'
import { type RunEnd, runEndNotifications } from '../../../src/job/notify/run-events.ts'
import { secretsOf } from '../../../src/job/notify/secrets.ts'

const end = (over: Partial<RunEnd>): RunEnd => ({
  command: 'run',
  jobId: 'acme',
  runId: 7,
  status: 'succeeded',
  exitCode: 0,
  durationMs: 1000,
  entities: { users: { total: 10, done: 8, rejected: 2, remaining: 0 }, messages: { total: 100, done: 90, rejected: 3, remaining: 7 } },
  final: false,
  rejectedBefore: 5,
  rejectThreshold: 1,
  ...over,
})

describe('runEndNotifications', () => {
  it('a failed or interrupted run sends run.failed with its error, not run.finished', () => {
    for (const status of ['failed', 'interrupted']) {
      const events = runEndNotifications(end({ status, exitCode: 1, error: 'platform unreachable' }))
      expect(events.map((e) => e.event)).toEqual(['run.failed'])
      expect(events[0]?.summary).toMatch(/run #7 .*: platform unreachable \(98 done, 7 remaining; rerun it to resume\)/)
    }
  })
  it('rejects.threshold counts only the rejects new since the start, against the threshold', () => {
    expect(runEndNotifications(end({ rejectedBefore: 5 })).map((e) => e.event)).toEqual(['run.finished'])
    expect(runEndNotifications(end({ rejectedBefore: 3, rejectThreshold: 2 })).map((e) => e.event)).toEqual(['run.finished', 'rejects.threshold'])
    expect(runEndNotifications(end({ rejectedBefore: 3, rejectThreshold: 3 })).map((e) => e.event)).toEqual(['run.finished'])
  })
  it('the final delta says whether the source was still written', () => {
    const done = runEndNotifications(end({ final: true, rejectedBefore: 5 }))
    expect(done.map((e) => e.event)).toEqual(['run.finished', 'delta.final.done'])
    const changing = runEndNotifications(end({ final: true, status: 'source-changing', exitCode: 4, rejectedBefore: 5 }))
    expect(changing[1]?.summary).toMatch(/freeze it and run the final delta again/)
  })
})

describe('notifier redaction', () => {
  it("the job's secrets and URL passwords never leave in a body", async () => {
    const config = {
      target: { apiKey: 'sk-live-abcdef123456' },
      source: { url: 'postgres://app:s3cr3t-pw@db/legacy' },
      notify: { hooks: [{ url: 'http://x/hook', headers: { authorization: 'Bearer hdr-token-999' } }] },
    }
    const secrets = secretsOf(config)
    expect(secrets).toEqual(expect.arrayContaining(['sk-live-abcdef123456', 's3cr3t-pw', 'http://x/hook', 'Bearer hdr-token-999']))
    const bodies: string[] = []
    const server = createServer((req, res) => {
      let t = ''
      req.on('data', (d: Buffer) => (t += d.toString()))
      req.on('end', () => (bodies.push(t), res.writeHead(204).end()))
    })
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
    const notifier = createNotifier(NotifySchema.parse({ hooks: [{ url }, { url, format: 'slack' }] }), { warn: () => {}, debug: () => {} }, secrets)
    notifier.send({
      event: 'run.failed',
      jobId: 'acme',
      summary: 'refused key sk-live-abcdef123456 while reading postgres://app:s3cr3t-pw@db/legacy',
      details: { error: 'Bearer hdr-token-999' },
    })
    await notifier.flush()
    server.close()
    expect(bodies.length).toBe(2)
    for (const b of bodies) {
      expect(b).not.toMatch(/sk-live|s3cr3t|hdr-token/)
      expect(b).toContain('[redacted]')
    }
  })
})
