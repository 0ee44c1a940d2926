/**
 * The live progress's ledger samples (src/cli/progress-drawer.ts): at least 2 s apart, and far
 * enough apart that a slow count (a large ledger) costs the ledger at most 1 part in 20.
 */
import { describe, expect, it } from 'vitest'

import { SAMPLE_COST_FACTOR, sampleGapMs } from '../../../src/cli/progress-drawer.ts'

describe('sampleGapMs', () => {
  it.each([
    [0, 2000],
    [20, 2000],
    [100, 2000],
    [101, 2020],
    [350, 7000],
    [3500, 70_000],
  ])('after a sample of %i ms the next waits %i ms', (cost, gap) => {
    expect(sampleGapMs(cost)).toBe(gap)
  })

  it('keeps the sampling within its share of the ledger whatever a sample costs', () => {
    for (const cost of [1, 99, 250, 1000, 12_345]) {
      expect(cost / sampleGapMs(cost)).toBeLessThanOrEqual(1 / SAMPLE_COST_FACTOR)
    }
  })
})
