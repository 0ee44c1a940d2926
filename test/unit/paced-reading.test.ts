/**
 * The pacing of the observers' ledger readings (src/paced-reading.ts): the next reading waits at
 * least the observer's own gap and at least 20 times what the last took, so that observing costs the
 * ledger at most 1 part in 20; in between the last reading answers, callers at one moment share
 * one reading, and a failed reading is not kept.
 */
import { describe, expect, it } from 'vitest'

import { pacedReading, READING_COST_FACTOR, readingGapMs } from '../../src/paced-reading.ts'

describe('readingGapMs', () => {
  it.each([
    [0, 2000, 2000],
    [20, 2000, 2000],
    [100, 2000, 2000],
    [101, 2000, 2020],
    [350, 2000, 7000],
    [3500, 2000, 70_000],
    [10, 500, 500],
    [100, 500, 2000],
    [3500, 500, 70_000],
  ])('after a reading of %i ms with a gap of %i ms the next waits %i ms', (cost, min, gap) => {
    expect(readingGapMs(cost, min)).toBe(gap)
  })

  it('keeps the readings within their share of the ledger whatever a reading costs', () => {
    for (const cost of [1, 99, 250, 1000, 12_345]) {
      expect(cost / readingGapMs(cost, 2000)).toBeLessThanOrEqual(1 / READING_COST_FACTOR)
    }
  })
})

/** A reading that takes `cost` ms of a fake clock and counts its calls. */
function world(cost: number) {
  let t = 0
  let calls = 0
  let fail = false
  const read = async () => {
    calls++
    const n = calls
    await Promise.resolve()
    t += cost
    if (fail) {
      throw new Error(`reading ${n} failed`)
    }
    return { n }
  }
  const r = pacedReading(read, { minGapMs: 500, now: () => t })
  return {
    r,
    calls: () => calls,
    at: (ms: number) => (t = ms),
    failing: (f: boolean) => (fail = f),
  }
}

describe('pacedReading', () => {
  it('a cheap reading: read again once its own gap has passed', async () => {
    const w = world(10)
    expect(await w.r.get()).toEqual({ n: 1 })
    w.at(400)
    expect(await w.r.get()).toEqual({ n: 1 })
    w.at(500)
    expect(await w.r.get()).toEqual({ n: 2 })
    expect(w.calls()).toBe(2)
  })

  it('a slow reading (3.5 s): the last answers for 70 s from its start', async () => {
    const w = world(3500)
    expect(await w.r.get()).toEqual({ n: 1 })
    expect(w.r.gapMs()).toBe(70_000)
    w.at(69_999)
    expect(await w.r.get()).toEqual({ n: 1 })
    w.at(70_000)
    expect(await w.r.get()).toEqual({ n: 2 })
    expect(w.calls()).toBe(2)
  })

  it('callers at one moment share one reading', async () => {
    const w = world(10)
    const all = await Promise.all([w.r.get(), w.r.get(), w.r.get()])
    expect(all.map((v) => v.n)).toEqual([1, 1, 1])
    expect(w.calls()).toBe(1)
  })

  it('a failed reading is not kept: its callers get the failure, the next call reads again', async () => {
    const w = world(10)
    expect(await w.r.get()).toEqual({ n: 1 })
    w.at(1000)
    w.failing(true)
    await expect(w.r.get()).rejects.toThrow('reading 2 failed')
    w.failing(false)
    expect(await w.r.get()).toEqual({ n: 3 })
  })

  it("costOf says what a reading cost the ledger (opening a store is not the ledger's work)", async () => {
    let t = 0
    const r = pacedReading(
      async () => {
        t += 3000
        return { opened: t === 3000 }
      },
      { minGapMs: 500, now: () => t, costOf: (v, ms) => (v.opened ? 0 : ms) },
    )
    expect(await r.get()).toEqual({ opened: true })
    expect(r.gapMs()).toBe(500)
    t = 3500
    expect(await r.get()).toEqual({ opened: false })
    expect(r.gapMs()).toBe(60_000)
  })
})
