import { pino } from 'pino'
import { describe, expect, it } from 'vitest'

import { describeCause, type FailedBatch, judgeFailure } from '../../../src/load/failure-rule.ts'
import { createOutageWatch } from '../../../src/load/outage.ts'
import { PlatformError, type PlatformErrorInit } from '../../../src/target/errors.ts'

const http = (status: number, items: number, healthyMeanwhile: boolean): FailedBatch => ({
  items,
  kind: 'http',
  status,
  retryable: status === 408 || status === 429 || status >= 500,
  healthyMeanwhile,
})
const noAnswer = (kind: FailedBatch['kind'], items: number, healthyMeanwhile: boolean): FailedBatch => ({
  items,
  kind,
  status: kind === 'invalid-response' ? 200 : undefined,
  retryable: kind !== 'refused',
  healthyMeanwhile,
})

describe('judgeFailure', () => {
  it.each([
    // A 500 points at the content: split down to the single item …
    ['500, 50 items, platform healthy', http(500, 50, true), 'split'],
    ['500, 50 items, nothing else succeeded', http(500, 50, false), 'split'],
    // … which is rejected only when the platform answered other requests meanwhile.
    ['500, 1 item, platform healthy', http(500, 1, true), 'reject'],
    ['500, 1 item, nothing else succeeded (outage)', http(500, 1, false), 'release'],
    // Gateways, overload and timeouts are never about the content.
    ['502, 50 items', http(502, 50, true), 'release'],
    ['503, 1 item, platform healthy', http(503, 1, true), 'release'],
    ['504, 1 item, platform healthy', http(504, 1, true), 'release'],
    ['507, 1 item, platform healthy', http(507, 1, true), 'release'],
    ['408, 1 item', http(408, 1, true), 'release'],
    ['connection refused, 1 item', noAnswer('network', 1, true), 'release'],
    ['timeout, 1 item', noAnswer('timeout', 1, true), 'release'],
    ['malformed answer, 1 item', noAnswer('invalid-response', 1, true), 'release'],
    // A refusal of the whole request for its content: split, then reject the one item.
    ['400, 50 items', http(400, 50, false), 'split'],
    ['413, 2 items', http(413, 2, false), 'split'],
    ['422, 1 item', http(422, 1, false), 'reject'],
    ['400, 1 item, nothing else succeeded', http(400, 1, false), 'reject'],
    // Nothing can succeed: stop the run.
    ['401', http(401, 50, true), 'stop'],
    ['403', http(403, 1, true), 'stop'],
    ['404', http(404, 1, true), 'stop'],
    ['307 redirect', http(307, 50, true), 'stop'],
    ['insecure transport', noAnswer('refused', 50, true), 'stop'],
  ])('%s → %s', (_name, batch, verdict) => {
    expect(judgeFailure(batch)).toBe(verdict)
  })
})

describe('describeCause', () => {
  const err = (init: Omit<PlatformErrorInit, 'operation'>) => new PlatformError({ operation: 'data_import.users', ...init })
  it.each([
    [err({ kind: 'http', status: 503, code: 'ERR_SERVICE_UNAVAILABLE', message: 'down' }), 'HTTP 503 ERR_SERVICE_UNAVAILABLE'],
    [err({ kind: 'http', status: 502, code: 'HTTP_502', message: 'Bad Gateway' }), 'HTTP 502 HTTP_502'],
    [
      err({ kind: 'network', code: 'NETWORK_ERROR', message: 'connection refused (ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:9)' }),
      'connection refused (ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:9)',
    ],
    [err({ kind: 'timeout', code: 'TIMEOUT', message: 'timeout after 3000 ms without an answer' }), 'timeout after 3000 ms without an answer'],
    [
      err({ kind: 'invalid-response', status: 200, code: 'INVALID_RESPONSE', message: 'unexpected response body at data' }),
      'malformed answer (HTTP 200)',
    ],
  ])('%s → %s', (e, cause) => {
    expect(describeCause(e)).toBe(cause)
  })
})

describe('createOutageWatch', () => {
  function watch(giveUpAfterMs: number) {
    let t = 1_000_000
    const lines: { level: number; msg: string }[] = []
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) })
    const w = createOutageWatch({ giveUpAfterMs, logger, summaryEveryMs: 10_000, now: () => t })
    return { w, lines, advance: (ms: number) => void (t += ms), at: () => t }
  }

  it('counts a run of failures without a success, from its first failure', () => {
    const { w, advance } = watch(8000)
    expect(w.exceeded()).toBe(false)
    w.failure('HTTP 503 ERR_SERVICE_UNAVAILABLE')
    advance(8000)
    expect(w.exceeded()).toBe(false)
    advance(1)
    expect(w.exceeded()).toBe(true)
    expect(w.giveUpMessage()).toMatch(
      /succeeded for 8 s \(1 failed; last cause: HTTP 503 ERR_SERVICE_UNAVAILABLE\).*giveUpAfterMs = 8000 ms.*Nothing was rejected/,
    )
    w.success()
    expect(w.exceeded()).toBe(false)
  })

  it('a success ends the outage; a long healthy stretch does not count toward the next one', () => {
    const { w, advance } = watch(5000)
    w.success()
    advance(60_000)
    w.failure('connection refused')
    advance(4000)
    expect(w.exceeded()).toBe(false)
  })

  it('knows whether the platform answered after a moment', () => {
    const { w, advance, at } = watch(5000)
    const before = at()
    expect(w.succeededAfter(before)).toBe(false)
    advance(10)
    w.success()
    expect(w.succeededAfter(before)).toBe(true)
    expect(w.succeededAfter(at())).toBe(false)
  })

  it('warns on the first failure, then at most once per summary interval, and tells the recovery', () => {
    const { w, lines, advance } = watch(600_000)
    w.failure('HTTP 502 HTTP_502')
    for (let i = 0; i < 25; i++) {
      advance(1000)
      w.failure('timeout after 3000 ms without an answer')
    }
    w.success()
    const warns = lines.filter((l) => l.level === 40).map((l) => l.msg)
    expect(warns).toEqual([
      'a request to the platform failed (HTTP 502 HTTP_502); retrying',
      'the platform has been failing for 10 s: 11 failed requests, last cause timeout after 3000 ms without an answer',
      'the platform has been failing for 20 s: 21 failed requests, last cause timeout after 3000 ms without an answer',
    ])
    expect(lines.at(-1)?.msg).toBe('the platform answers again')
  })
})
