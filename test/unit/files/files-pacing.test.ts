/**
 * Pacing (src/files/pace/): a host's pool never runs more downloads at once than its
 * `concurrency` and another host (or one with its own `hosts` entry) is not held up by it; the
 * shared bandwidth cap makes a second's worth of burst and then lets bytes through at its rate.
 */
import { Readable, Writable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { setTimeout as sleep } from 'node:timers/promises'

import { describe, expect, it } from 'vitest'

import { createBandwidthLimit } from '../../../src/files/pace/bandwidth-limit.ts'
import { createHostPacer } from '../../../src/files/pace/host-pacer.ts'

describe('the host pacer', () => {
  it("keeps each host's downloads within its pool, per host", async () => {
    const pacer = createHostPacer({
      perHost: { concurrency: 2, requestsPerSecond: 1000 },
      hosts: { 'big.example.com': { concurrency: 5, requestsPerSecond: 1000 } },
    })
    const running = new Map<string, number>()
    const peak = new Map<string, number>()
    const task = (host: string) => async () => {
      running.set(host, (running.get(host) ?? 0) + 1)
      peak.set(host, Math.max(peak.get(host) ?? 0, running.get(host)!))
      await sleep(20)
      running.set(host, running.get(host)! - 1)
    }
    const hosts = ['a.example.com', 'b.example.com', 'big.example.com']
    await Promise.all(hosts.flatMap((h) => Array.from({ length: 10 }, () => pacer.run(h, task(h)))))
    expect(Object.fromEntries(peak)).toEqual({ 'a.example.com': 2, 'b.example.com': 2, 'big.example.com': 5 })
  })

  it('rejects a waiting task when its signal aborts', async () => {
    const pacer = createHostPacer({ perHost: { concurrency: 1, requestsPerSecond: 1000 } })
    const blocker = pacer.run('h', () => sleep(100))
    const controller = new AbortController()
    const waiting = pacer.run('h', () => Promise.resolve('ran'), controller.signal)
    controller.abort(new Error('stopped'))
    await expect(waiting).rejects.toThrow('stopped')
    await blocker
  })
})

describe('the bandwidth cap', () => {
  it('passes every byte, a second of burst at once and the rest at the cap', async () => {
    const limit = createBandwidthLimit(100_000)
    const chunks = Array.from({ length: 15 }, () => Buffer.alloc(10_000, 1))
    let received = 0
    const started = performance.now()
    await pipeline(
      Readable.from(chunks),
      limit.throttle(),
      new Writable({
        write(chunk: Buffer, _e, cb) {
          received += chunk.length
          cb()
        },
      }),
    )
    const seconds = (performance.now() - started) / 1000
    expect(received).toBe(150_000)
    // 100 kB pass at once; the next 50 kB need half a second at 100 kB/s.
    expect(seconds).toBeGreaterThanOrEqual(0.45)
  })
})
