import { describe, expect, it } from 'vitest'

import { readAhead } from '../../../src/plan/read-ahead.ts'

/** A source of `n` pages that logs when each page is asked for and whether it was closed. */
function source(n: number, failAt?: number) {
  const log: string[] = []
  async function* pages() {
    try {
      for (let i = 0; i < n; i++) {
        log.push(`ask ${i}`)
        await new Promise((r) => setTimeout(r, 1))
        if (i === failAt) {
          throw new Error(`page ${i} failed`)
        }
        yield i
      }
    } finally {
      log.push('closed')
    }
  }
  return { log, pages: pages() }
}

describe('readAhead', () => {
  it('yields every page in order, asking for the next before the current one is handled', async () => {
    const { log, pages } = source(3)
    const seen: number[] = []
    for await (const p of readAhead(pages)) {
      log.push(`handle ${p}`)
      seen.push(p)
    }
    expect(seen).toEqual([0, 1, 2])
    // The end of the source is seen ahead too: it is closed before the last page is handled.
    expect(log).toEqual(['ask 0', 'ask 1', 'handle 0', 'ask 2', 'handle 1', 'closed', 'handle 2'])
  })

  it('closes the source when the consumer stops early', async () => {
    const { log, pages } = source(5)
    for await (const p of readAhead(pages)) {
      if (p === 1) {
        break
      }
    }
    expect(log.at(-1)).toBe('closed')
    expect(log.filter((l) => l.startsWith('ask'))).toEqual(['ask 0', 'ask 1', 'ask 2'])
  })

  it("reports a failure of the page asked for ahead when that page's turn comes", async () => {
    const { pages } = source(5, 1)
    const seen: number[] = []
    await expect(
      (async () => {
        for await (const p of readAhead(pages)) {
          seen.push(p)
        }
      })(),
    ).rejects.toThrow('page 1 failed')
    expect(seen).toEqual([0])
  })
})
