/**
 * What the sandbox's request log says about a load whose messages include rows only the platform
 * refuses (issue 24): checked from the log alone, never from the ledger and never from what the
 * sandbox stores (its unique keys would hide a second write): every good row *created* exactly
 * once, no good row carried again after it was created (beyond what kills explain), each bad row
 * never created and its last request a request of that row alone answered 500 — the platform's
 * word about that row.
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
  /** Row sends of good rows that the platform did not write (500s after a partial write). */
  readonly unwrittenSends: number
}

/** Checks the messages of `log` against the good and bad keys; returns the counts. */
export function checkBadRowLog(log: readonly RequestLogEntry[], good: ReadonlySet<string>, bad: ReadonlySet<string>): BadRowLogFacts {
  const msgs = log.filter((r) => r.endpoint === 'messages')
  const created = new Map<string, number>()
  const lastOf = new Map<string, RequestLogEntry>()
  let existsAnswers = 0
  let unwrittenSends = 0
  for (const r of msgs) {
    for (const i of r.items ?? []) {
      lastOf.set(i.key, r)
      if (i.result === 'created') {
        created.set(i.key, (created.get(i.key) ?? 0) + 1)
      } else if (i.result === 'exists') {
        existsAnswers++
      } else if (i.result === 'unwritten' && good.has(i.key)) {
        unwrittenSends++
      }
    }
  }
  const wrong = [...good].filter((k) => created.get(k) !== 1).map((k) => `${k} created ${created.get(k) ?? 0} times`)
  wrong.push(...[...created.keys()].filter((k) => !good.has(k)).map((k) => `${k} created but not a good row`))
  expect(wrong, 'every good row created exactly once, nothing else').toEqual([])
  for (const k of bad) {
    const last = lastOf.get(k)
    expect([last?.itemCount, last?.status, last?.code], `the last request of bad row ${k}`).toEqual([1, 500, 'ERR_EXCEPTION'])
  }
  const rateLimited = msgs.filter((r) => r.status === 429).length
  return { requests: msgs.length, rateLimited, existsAnswers, unwrittenSends }
}
