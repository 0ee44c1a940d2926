/* eslint-disable no-control-regex */
/** `foldLine`: log lines above the progress bars, folded to the terminal's width, never cut. */
import { describe, expect, it } from 'vitest'

import { foldLine } from '../../../src/cli/fold-line.ts'

const ESC = '\x1b'

describe('foldLine', () => {
  it.each([
    ['a short line stays one line', 'short line\n', 80, ['short line']],
    ['a newline is added when missing', 'no newline', 80, ['no newline']],
    ['folded at spaces, later lines indented', 'aaaa bbbb cccc dddd eeee ffff', 20, ['aaaa bbbb cccc dddd', '    eeee ffff']],
    [
      'a long JSON token breaks after a comma',
      'INFO: planned users {"entity":"users","rows":6,"ledger":{"inserted":4}}',
      30,
      ['INFO: planned users', '    {"entity":"users",', '    "rows":6,', '    "ledger":{"inserted":4}}'],
    ],
    ['a token without a comma is split where it must', 'x'.repeat(45), 24, ['x'.repeat(20), `    ${'x'.repeat(20)}`, `    ${'x'.repeat(5)}`]],
  ])('%s', (_name, line, columns, want) => {
    const out = foldLine(line, columns)
    expect(out.endsWith('\n')).toBe(true)
    expect(out.slice(0, -1).split('\n')).toEqual(want)
  })

  it('colour codes take no width and are never split', () => {
    const line = `${ESC}[32mINFO${ESC}[39m: ${'word '.repeat(20).trim()}`
    const out = foldLine(line, 30).slice(0, -1).split('\n')
    for (const l of out) {
      expect(l.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '').length).toBeLessThanOrEqual(30)
    }
    expect(out[0]).toContain(`${ESC}[32mINFO${ESC}[39m`)
    expect(
      out
        .join(' ')
        .replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '')
        .replace(/\s+/g, ' '),
    ).toBe(`INFO: ${'word '.repeat(20).trim()}`)
  })
})
