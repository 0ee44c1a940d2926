/**
 * The lanes' retry of a loop-level ledger operation (src/load/ledger-retry.ts), with real timers
 * and the loader's backoff (the first waits are 250–500 ms, then 500–1000 ms): every failed attempt
 * counted, the streak logged once when it starts and once when it ends, a failure past the bound
 * ended with an error naming the operation, a permanent error (ledger-error-kind.ts) ended at once
 * naming it, a stop that cuts the backoff short, and an answer that arrives after the stop kept (a
 * claim that committed must not be dropped).
 */
import pg from 'pg'
import { pino } from 'pino'
import { expect, it } from 'vitest'

import { FatalLoadError } from '../../../src/load/fatal-load-error.ts'
import { createLedgerRetry } from '../../../src/load/ledger-retry.ts'

function retrying(giveUpAfterMs: number) {
  const lines: { level: number; msg: string; operation?: string; failures?: number }[] = []
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) })
  const stop = new AbortController()
  const counters = { ledgerErrors: 0 }
  const retry = createLedgerRetry({ giveUpAfterMs, logger, signal: stop.signal, counters })
  return { retry, lines, stop, counters }
}

/** An operation that fails `n` times (as a reset connection does), then answers `value`. */
function failing<T>(n: number, value: T): { op: () => Promise<T>; calls: () => number } {
  let calls = 0
  return {
    op: () => (++calls <= n ? Promise.reject(new Error('Connection terminated unexpectedly')) : Promise.resolve(value)),
    calls: () => calls,
  }
}

it('a failure that clears within the bound: retried, each failed attempt counted, the streak logged once at each end', async () => {
  const { retry, lines, counters } = retrying(60_000)
  const { op, calls } = failing(2, ['batch 7'])
  await expect(retry('claiming batches', op)).resolves.toEqual({ value: ['batch 7'] })
  expect(calls()).toBe(3)
  expect(counters.ledgerErrors).toBe(2)
  expect(lines.map((l) => [l.level, l.msg])).toEqual([
    [40, 'the ledger failed while claiming batches; retrying'],
    [30, 'the ledger answers again (claiming batches)'],
  ])
  expect(lines[1]).toMatchObject({ operation: 'claiming batches', failures: 2 })
})

it('no failure: nothing counted, nothing logged', async () => {
  const { retry, lines, counters } = retrying(60_000)
  await expect(retry('checking whether the job is drained', () => Promise.resolve(true))).resolves.toEqual({ value: true })
  expect(counters.ledgerErrors).toBe(0)
  expect(lines).toEqual([])
})

it('a failure that outlasts the bound ends with an error naming the operation, the attempts and the last error', async () => {
  const { retry, lines, counters } = retrying(1000)
  const { op, calls } = failing(Number.POSITIVE_INFINITY, [])
  const failed = await retry('claiming updates', op).catch((err: unknown) => err)
  expect(failed).toBeInstanceOf(FatalLoadError)
  expect((failed as Error).message).toMatch(
    /^the ledger kept failing while claiming updates: \d+ attempts in 1(\.\d)? s, the last: Connection terminated unexpectedly; gave up after load\.giveUpAfterMs = 1000 ms/,
  )
  expect(calls()).toBeGreaterThanOrEqual(2)
  expect(counters.ledgerErrors).toBe(calls())
  expect(lines.filter((l) => l.level === 40)).toHaveLength(1)
})

it('a stop cuts the backoff short: undefined, not an error, and the operation is not tried again', async () => {
  const { retry, stop, counters } = retrying(60_000)
  let calls = 0
  let abortedAt = 0
  const pending = retry('packing batches', () => {
    // The stop comes during the second backoff (500–1000 ms), which starts after this failure.
    if (++calls === 2) {
      setTimeout(() => {
        abortedAt = Date.now()
        stop.abort()
      }, 20)
    }
    return Promise.reject(Object.assign(new pg.DatabaseError('terminating connection due to administrator command', 100, 'error'), { code: '57P01' }))
  })
  await expect(pending).resolves.toBeUndefined()
  expect(Date.now() - abortedAt).toBeLessThan(200)
  expect(calls).toBe(2)
  expect(counters.ledgerErrors).toBe(2)
})

it('an answer that arrives after the stop is kept: a claim that committed is not dropped', async () => {
  const { retry, stop } = retrying(60_000)
  const claimed = retry('claiming batches', async () => {
    stop.abort()
    return ['batch 9']
  })
  await expect(claimed).resolves.toEqual({ value: ['batch 9'] })
})

it.each([
  [
    'a missing table',
    () => Object.assign(new pg.DatabaseError('relation "chatferry.updates" does not exist', 100, 'error'), { code: '42P01' }),
    '42P01',
  ],
  ['a closed pool', () => new Error('Cannot use a pool after calling end on the pool'), 'Error'],
  ['a bug', () => new TypeError('x is not a function'), 'TypeError'],
])('a permanent error (%s) ends at once naming the operation, counted once, not logged as retried', async (_, error, label) => {
  const { retry, lines, counters } = retrying(60_000)
  let calls = 0
  const startedAt = Date.now()
  const failed = await retry('claiming updates', () => {
    calls++
    return Promise.reject(error())
  }).catch((err: unknown) => err)
  expect(Date.now() - startedAt).toBeLessThan(100)
  expect(failed).toBeInstanceOf(FatalLoadError)
  expect((failed as Error).message).toBe(
    `the ledger failed while claiming updates, with an error no retry can fix (${label}): ${error().message}. Nothing was lost`,
  )
  expect((failed as Error).cause).toBeInstanceOf(Error)
  expect(calls).toBe(1)
  expect(counters.ledgerErrors).toBe(1)
  expect(lines).toEqual([])
})

it('a permanent error after a transient streak ends it at once, every attempt counted', async () => {
  const { retry, counters } = retrying(60_000)
  let calls = 0
  const failed = await retry('packing batches', () =>
    Promise.reject(
      ++calls === 1
        ? new Error('Connection terminated unexpectedly')
        : Object.assign(new Error('permission denied for table batches'), { code: '42501' }),
    ),
  ).catch((err: unknown) => err)
  expect((failed as Error).message).toMatch(/^the ledger failed while packing batches, with an error no retry can fix \(42501\): permission denied/)
  expect(calls).toBe(2)
  expect(counters.ledgerErrors).toBe(2)
})
