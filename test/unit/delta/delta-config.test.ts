/**
 * The `delta:` section (issue 24): its defaults, every mistake listed with its path before any I/O,
 * the read window it gives a delta (the watermark less the entity's lookback; a resumed delta keeps
 * its start), and when a delta reconciles the keys.
 */
import { describe, expect, it } from 'vitest'

import { ConfigError } from '../../../src/errors.ts'
import { parseConfig } from '../../../src/job/config.ts'
import { DEFAULT_DELTA, DeltaSchema, lookbackMs, reconcileDue } from '../../../src/plan/delta-config.ts'
import { readWindow } from '../../../src/plan/read-window.ts'

const env = { CHATFERRY_API_KEY: 'k'.repeat(40) }
const TARGET = 'target: { appId: a, region: eu, apiKey: "${CHATFERRY_API_KEY}" }'

function problemsOf(yaml: string): { path: string; message: string }[] {
  try {
    parseConfig(yaml, 'test.yaml', env)
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError)
    return [...(err as ConfigError).problems]
  }
  throw new Error('expected the configuration to be refused')
}

describe('delta: configuration', () => {
  it('defaults to a one-hour lookback for every entity and a key reconciliation every 24th delta', () => {
    const config = parseConfig(TARGET, 'c.yaml', env)
    expect(config.delta).toEqual({ lookbackSeconds: { users: 3600, groups: 3600, members: 3600, messages: 3600 }, reconcileKeysEvery: 24 })
    expect(DEFAULT_DELTA).toEqual(config.delta)
  })

  it('takes a lookback per entity, the others keeping the default', () => {
    const config = parseConfig(`${TARGET}\ndelta:\n  lookbackSeconds: { messages: 7200, users: 0 }\n  reconcileKeysEvery: 0\n`, 'c.yaml', env)
    expect(config.delta.lookbackSeconds).toEqual({ users: 0, groups: 3600, members: 3600, messages: 7200 })
    expect(lookbackMs(config.delta, 'messages')).toBe(7_200_000)
    expect(config.delta.reconcileKeysEvery).toBe(0)
  })

  it('lists every mistake with its path', () => {
    const yaml = [
      TARGET,
      'delta:',
      '  lookbackSeconds: { messages: -1, users: 1.5, posts: 60, groups: "1h" }',
      '  reconcileKeysEvery: 2.5',
      '  every: 3',
    ].join('\n')
    expect(
      problemsOf(yaml)
        .map((p) => p.path)
        .sort(),
    ).toEqual([
      'delta',
      'delta.lookbackSeconds',
      'delta.lookbackSeconds.groups',
      'delta.lookbackSeconds.messages',
      'delta.lookbackSeconds.users',
      'delta.reconcileKeysEvery',
    ])
    expect(DeltaSchema.safeParse({ lookbackSeconds: { messages: 31 * 86_400 } }).success).toBe(false)
  })
})

describe('the read window of a delta', () => {
  const state = { cursor: { id: 9, complete: 1 }, watermark: 10_000_000, updatedAt: new Date() }

  it('starts the lookback before the watermark, never before 0', () => {
    expect(readWindow('messages', 'delta', state, 3_600_000).since).toBe(10_000_000 - 3_600_000)
    expect(readWindow('messages', 'delta', state, 0).since).toBe(10_000_000)
    expect(readWindow('messages', 'delta', { ...state, watermark: 1000 }, 3_600_000).since).toBe(0)
  })

  it('resumes an interrupted delta from its own start, not the lookback again', () => {
    const w = readWindow('messages', 'delta', { ...state, cursor: { id: 4, complete: 1, delta: 6_400_000 } }, 3_600_000)
    expect(w.since).toBe(6_400_000)
    expect(w.after).toEqual({ id: 4 })
  })

  it('reads a full run without any lookback', () => {
    expect(readWindow('messages', 'full', { ...state, cursor: { id: 4 } }, 3_600_000)).toMatchObject({ since: undefined, after: { id: 4 } })
  })
})

describe('when a delta reconciles the keys', () => {
  const every = (n: number) => DeltaSchema.parse({ reconcileKeysEvery: n })

  it('every Nth delta: after N - 1 deltas without one', () => {
    expect([0, 1, 2, 3].map((since) => reconcileDue(every(3), since, false))).toEqual([false, false, true, true])
    expect(reconcileDue(every(1), 0, false)).toBe(true)
  })

  it('when forced (--reconcile-keys, the final delta), also with reconcileKeysEvery 0', () => {
    expect(reconcileDue(every(0), 1000, false)).toBe(false)
    expect(reconcileDue(every(0), 0, true)).toBe(true)
  })
})
