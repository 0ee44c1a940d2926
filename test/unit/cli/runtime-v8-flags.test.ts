/**
 * The V8 flags chatferry sets once its modules are loaded (src/cli/runtime-v8-flags.ts): each only
 * when neither the command line nor NODE_OPTIONS gives a value of it (for a `--no-` flag, the flag it
 * negates counts as given), set once.
 */
import { describe, expect, it } from 'vitest'

import { applyRuntimeV8Flags, missingRuntimeV8Flags, RUNTIME_V8_FLAGS } from '../../../src/cli/runtime-v8-flags.ts'

const PRETENURING = '--no-allocation-site-pretenuring'
const GROWING = '--heap-growing-percent=50'

describe('missingRuntimeV8Flags', () => {
  it.each<[string, string[], string | undefined, readonly string[]]>([
    ['nothing given', [], undefined, [PRETENURING, GROWING]],
    ["chatferry's start-up flag only", ['--max-semi-space-size=16'], '--max-semi-space-size=16', [PRETENURING, GROWING]],
    ['the same flag on the command line', [PRETENURING], undefined, [GROWING]],
    ['spelt with underscores, as Node accepts', ['--no_allocation_site_pretenuring'], undefined, [GROWING]],
    ["the operator's opposite of the --no- flag", ['--allocation-site-pretenuring'], undefined, [GROWING]],
    ['a flag that only starts like it', ['--allocation-site-pretenuring-other'], undefined, [PRETENURING, GROWING]],
    ["the operator's own growing factor", ['--heap-growing-percent=200'], undefined, [PRETENURING]],
    ['both given', ['--allocation-site-pretenuring', '--heap_growing_percent=0'], undefined, []],
  ])('%s', (_case, execArgv, nodeOptions, expected) => {
    expect(missingRuntimeV8Flags(execArgv, nodeOptions)).toEqual([...expected])
  })
})

describe('applyRuntimeV8Flags', () => {
  it('sets exactly the missing ones, once each', () => {
    const set: string[] = []
    expect(applyRuntimeV8Flags((f) => set.push(f), [], undefined)).toEqual([PRETENURING, GROWING])
    expect(set).toEqual([PRETENURING, GROWING])
  })

  it("sets nothing when the operator gave V8's own behaviour", () => {
    const set: string[] = []
    expect(applyRuntimeV8Flags((f) => set.push(f), ['--allocation-site-pretenuring', '--heap-growing-percent=0'], undefined)).toEqual([])
    expect(set).toEqual([])
  })

  it('keeps V8 from pretenuring what lives for one page, and its old generation within half again its live size', () => {
    expect(RUNTIME_V8_FLAGS).toEqual([PRETENURING, GROWING])
  })
})
