/**
 * What the sandbox's request log says about a load whose messages include rows only the platform
 * refuses (issue 24): checked from the log alone, never from the ledger and never from what the
 * sandbox stores (its unique keys would hide a second write): every good row *created* exactly
 * once, no good row carried again after it was created (beyond what kills explain), each bad row
 * never created and its last request a request of that row alone answered 500 — the platform's
 * word about that row. `readBadRowLog` returns what is wrong (for mutant checks that must see it
 * fail); `checkBadRowLog` asserts that nothing is.
 */
import { expect } from 'vitest'

import type { RequestLogEntry } from '../../src/sandbox/request-log.ts'

export interface BadRowLogFacts {
  /** Data-import requests to the messages endpoint (429s included). */
  readonly requests: number
  /** Of them, answered 429. */
  readonly rateLimited: number
  /** Rows carried again after the platform had written them ("exists" answers). */
  readonly existsAnswers: number
  /**
   * Sends of a good row by a request after the one that created it, whatever the answer (an
   * "exists", but also a 429 or a dropped request): zero for a loader that was never killed.
   */
  readonly sentAfterCreated: number
  /** Row sends of good rows that the platform did not write (500s after a partial write). */
  readonly unwrittenSends: number
}

export interface BadRowLogReading extends BadRowLogFacts {
  /** Good rows not created exactly once, rows created that are not good rows. */
  readonly wrongCreations: readonly string[]
  /** Bad rows whose last request was not that row alone answered 500 `ERR_EXCEPTION`. */
  readonly wrongLastRequests: readonly string[]
}

/** Reads the messages of `log` (oldest first) against the good and bad keys. */
export function readBadRowLog(log: readonly RequestLogEntry[], good: ReadonlySet<string>, bad: ReadonlySet<string>): BadRowLogReading {
  const msgs = log.filter((r) => r.endpoint === 'messages')
  const created = new Map<string, number>()
  const lastOf = new Map<string, RequestLogEntry>()
  let existsAnswers = 0
  let sentAfterCreated = 0
  let unwrittenSends = 0
  for (const r of msgs) {
    for (const i of r.items ?? []) {
      lastOf.set(i.key, r)
      if (good.has(i.key) && (created.get(i.key) ?? 0) > 0) {
        sentAfterCreated++
      }
      if (i.result === 'created') {
        created.set(i.key, (created.get(i.key) ?? 0) + 1)
      } else if (i.result === 'exists') {
        existsAnswers++
      } else if (i.result === 'unwritten' && good.has(i.key)) {
        unwrittenSends++
      }
    }
  }
  const wrongCreations = [...good].filter((k) => created.get(k) !== 1).map((k) => `${k} created ${created.get(k) ?? 0} times`)
  wrongCreations.push(...[...created.keys()].filter((k) => !good.has(k)).map((k) => `${k} created but not a good row`))
  const wrongLastRequests = [...bad].flatMap((k) => {
    const last = lastOf.get(k)
    return last?.itemCount === 1 && last.status === 500 && last.code === 'ERR_EXCEPTION'
      ? []
      : [`bad row ${k}: last request ${last ? `of ${last.itemCount} rows answered ${last.status} ${last.code}` : 'none'}`]
  })
  const rateLimited = msgs.filter((r) => r.status === 429).length
  return { requests: msgs.length, rateLimited, existsAnswers, sentAfterCreated, unwrittenSends, wrongCreations, wrongLastRequests }
}

/** Asserts the messages of `log` against the good and bad keys (see the header); returns the counts. */
export function checkBadRowLog(log: readonly RequestLogEntry[], good: ReadonlySet<string>, bad: ReadonlySet<string>): BadRowLogFacts {
  const { wrongCreations, wrongLastRequests, ...facts } = readBadRowLog(log, good, bad)
  expect(wrongCreations, 'every good row created exactly once, nothing else').toEqual([])
  expect(wrongLastRequests, 'the last request of each bad row: that row alone, answered 500 ERR_EXCEPTION').toEqual([])
  return facts
}
