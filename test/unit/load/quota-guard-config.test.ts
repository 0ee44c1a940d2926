/**
 * `load.quotaGuardMs`: unset by default (the budget's own max(1% of the window, 250 ms)), read from
 * the file or `CHATFERRY_LOAD_QUOTA_GUARD_MS`, handed to the budgets only when set, and refused
 * (naming the path and the window) when it is not less than the window.
 */
import { describe, expect, it } from 'vitest'

import { ConfigError } from '../../../src/errors.ts'
import { quotaTiming, resolveLoadConfig } from '../../../src/load/config.ts'
import { quotaSlots } from '../../../src/load/quota-budget.ts'

function problems(fromFile: unknown, env: NodeJS.ProcessEnv = {}): string[] {
  try {
    resolveLoadConfig(fromFile, {}, env)
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError)
    return (err as ConfigError).problems.map((p) => `${p.path}: ${p.message}`)
  }
  throw new Error('expected the settings to be refused')
}

describe('load.quotaGuardMs', () => {
  it.each([
    { name: 'unset: the budget keeps its own default', file: {}, env: {}, timing: { windowMs: 60_000 }, guardMs: 600 },
    { name: 'from the file', file: { quotaGuardMs: 2000 }, env: {}, timing: { windowMs: 60_000, guardMs: 2000 }, guardMs: 2000 },
    { name: 'zero is allowed', file: { quotaGuardMs: 0 }, env: {}, timing: { windowMs: 60_000, guardMs: 0 }, guardMs: 0 },
    {
      name: 'the environment over the file',
      file: { quotaGuardMs: 2000, quotaWindowMs: 3000 },
      env: { CHATFERRY_LOAD_QUOTA_GUARD_MS: '750' },
      timing: { windowMs: 3000, guardMs: 750 },
      guardMs: 750,
    },
  ])('$name', ({ file, env, timing, guardMs }) => {
    const load = resolveLoadConfig(file, {}, env)
    expect(quotaTiming(load)).toEqual(timing)
    expect(quotaSlots({ requestsPerWindow: 60, ...quotaTiming(load) }).guardMs).toBe(guardMs)
  })

  it.each([
    {
      name: 'equal to the window',
      file: { quotaWindowMs: 3000, quotaGuardMs: 3000 },
      expected: 'load.quotaGuardMs: must be less than load.quotaWindowMs (3000)',
    },
    { name: 'over the default window', file: { quotaGuardMs: 60_000 }, expected: 'load.quotaGuardMs: must be less than load.quotaWindowMs (60000)' },
    { name: 'negative', file: { quotaGuardMs: -1 }, expected: 'load.quotaGuardMs' },
    { name: 'a fraction', file: { quotaGuardMs: 1.5 }, expected: 'load.quotaGuardMs' },
  ])('refuses a guard $name, naming load.quotaGuardMs', ({ file, expected }) => {
    expect(problems(file).some((p) => p.startsWith(expected))).toBe(true)
  })
})
