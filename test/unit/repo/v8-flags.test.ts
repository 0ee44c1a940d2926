/**
 * Which of chatferry's V8 flags (bin/v8-flags.js) the installed command still has to add: those
 * neither its command line nor NODE_OPTIONS sets, whatever value the operator gave.
 */
import { describe, expect, it } from 'vitest'

import { missingV8Flags, V8_FLAGS } from '../../../bin/v8-flags.js'

describe('missingV8Flags', () => {
  it.each<[string, string[], string | undefined, readonly string[]]>([
    ['nothing given', [], undefined, V8_FLAGS],
    ['an empty NODE_OPTIONS', [], '', V8_FLAGS],
    ['other flags only', ['--inspect'], '--max-old-space-size=4096 --trace-warnings', V8_FLAGS],
    ['the flag on the command line', ['--max-semi-space-size=16'], undefined, []],
    ["the operator's own value on the command line", ['--max-semi-space-size=8'], undefined, []],
    ["the operator's own value in NODE_OPTIONS", [], '--max-semi-space-size=32', []],
    ['spelt with underscores, as Node accepts', [], '--max_semi_space_size=32', []],
    ['among other options, with extra spaces', [], '  --trace-gc   --max-semi-space-size=8 ', []],
    ['a value that only starts like the flag', [], '--max-semi-space-size-other=1', V8_FLAGS],
    ['a non-flag word that names it', [], 'max-semi-space-size=1', V8_FLAGS],
  ])('%s', (_case, execArgv, nodeOptions, expected) => {
    expect(missingV8Flags(execArgv, nodeOptions)).toEqual([...expected])
  })

  it('caps the young generation', () => {
    expect(V8_FLAGS).toContain('--max-semi-space-size=16')
  })
})
