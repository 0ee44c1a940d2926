/**
 * Issue 28, item 6: the progress bars on an 80-column terminal keep their ETA and cut no fact in
 * half, and the bars show the rate `status` shows (items done in the last minute, from the ledger).
 */
import { describe, expect, it } from 'vitest'

import { barLine, type ProgressRow } from '../../../src/cli/progress.ts'
import { ledgerRates, loadingRows } from '../../../src/cli/progress-drawer.ts'
import { buildReport } from '../../../src/load/progress.ts'
import type { EntityStats } from '../../../src/state/store.ts'

const row: ProgressRow = {
  entity: 'messages',
  value: 123_456,
  total: 1_000_000,
  perMinute: 2_950,
  ofQuota: 0.983,
  eta: 'ETA@quota 4h 57m',
  note: 'rejected 1,234',
}

describe('barLine', () => {
  it('the whole line when it fits', () => {
    const line = barLine('loading', row, 'items', 0.12, 200)
    expect(line).toMatch(
      /^loading [█░]{24} messages 123,456\/1,000,000 items 12\.3% {2}2,950 items\/min \(98% of quota\) {2}ETA@quota 4h 57m {2}rejected 1,234$/,
    )
  })

  for (const columns of [80, 60, 40]) {
    it(`${columns} columns: at most ${columns} characters, the ETA whole`, () => {
      const line = barLine('loading', row, 'items', 0.12, columns)
      expect(line.length, line).toBeLessThanOrEqual(columns)
      expect(line).toContain('ETA@quota 4h 57m')
      expect(line).toContain('12.3%')
    })
  }

  it('80 columns keep the rate and the note beside a narrower bar', () => {
    expect(barLine('loading', row, 'items', 0.5, 80)).toMatch(/^loading [█░]{6,24} messages 12\.3% 2,950\/min ETA@quota 4h 57m {2}rejected 1,234$/)
  })
})

describe('one rate figure', () => {
  it('the bars use the items done in the last minute, as status does', () => {
    const stats = [
      { entity: 'messages', total: 10_000, done: 4_000, skipped: 0, rejected: 0, remaining: 6_000, itemsLastMinute: 1_500 },
    ] as EntityStats[]
    const quota = { requestsPerMinute: 60, itemsPerRequest: 50 }
    const status = buildReport(stats, quota)
    const [bar] = loadingRows(status, ledgerRates(stats))
    expect(bar!.perMinute).toBe(1_500)
    expect(bar!.ofQuota).toBe(status[0]!.rateVsQuota)
  })
})
