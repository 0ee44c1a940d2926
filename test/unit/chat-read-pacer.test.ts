import { describe, expect, it } from 'vitest'

import { createChatReadPacer } from '../../src/load/chat-read-pacer.ts'
import { PlatformError } from '../../src/target/errors.ts'

const tooMany = (retryAfterMs?: number) =>
  new PlatformError({
    operation: 'chat.listMessages',
    kind: 'http',
    status: 429,
    code: 'ERR_TOO_MANY_REQUESTS',
    message: 'slow down',
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  })

describe('createChatReadPacer', () => {
  it('spaces calls by 60 000 / requestsPerMinute ms', async () => {
    const pacer = createChatReadPacer(1200) // 50 ms
    const at: number[] = []
    for (let i = 0; i < 4; i++) {
      await pacer.run(async () => at.push(performance.now()))
    }
    for (let i = 1; i < at.length; i++) {
      expect((at[i] as number) - (at[i - 1] as number)).toBeGreaterThanOrEqual(45)
    }
    expect(pacer.counters).toEqual({ requests: 4, rateLimited: 0 })
  })

  it('waits out a 429 for its Retry-After, then makes the call again', async () => {
    const pacer = createChatReadPacer(60_000)
    let calls = 0
    const t0 = performance.now()
    const value = await pacer.run(async () => {
      calls++
      if (calls === 1) {
        throw tooMany(150)
      }
      return 'ok'
    })
    expect(value).toBe('ok')
    expect(performance.now() - t0).toBeGreaterThanOrEqual(140)
    expect(pacer.counters).toEqual({ requests: 2, rateLimited: 1 })
  })

  it('gives up after a few 429s in a row, and never retries another failure', async () => {
    const pacer = createChatReadPacer(60_000)
    await expect(pacer.run(() => Promise.reject(tooMany(1)))).rejects.toMatchObject({ status: 429 })
    expect(pacer.counters).toEqual({ requests: 5, rateLimited: 4 })
    const boom = new PlatformError({ operation: 'chat.listMessages', kind: 'http', status: 500, code: 'ERR_EXCEPTION', message: 'x' })
    await expect(pacer.run(() => Promise.reject(boom))).rejects.toBe(boom)
    expect(pacer.counters.requests).toBe(6)
  })

  it('a stop cuts the wait for a slot short', async () => {
    const pacer = createChatReadPacer(1) // one a minute
    await pacer.run(async () => 1)
    const stop = new AbortController()
    const waiting = pacer.run(async () => 2, stop.signal)
    setTimeout(() => stop.abort(), 20)
    await expect(waiting).rejects.toMatchObject({ name: 'AbortError' })
    expect(pacer.counters.requests).toBe(1)
  })
})
