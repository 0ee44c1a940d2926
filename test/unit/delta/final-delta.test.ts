/** The final delta's record and its warning, from the per-entity counts of source rows changed after its read began. */
import { describe, expect, it } from 'vitest'

import { cutoverChecked, describeBlockers, describeSourceChanges, type SourceChanges } from '../../../src/job/final-delta.ts'

const T = Date.UTC(2026, 10, 30, 18, 0, 2, 120)
const none: SourceChanges = { users: 0, groups: 0, members: 0, messages: 0 }

describe('describeSourceChanges', () => {
  it.each([
    ['frozen', none, undefined, undefined],
    [
      'messages and a user',
      { ...none, messages: 12, users: 1 },
      'the source is still being written: 1 user, 12 messages changed after the final read began at 2026-11-30T18:00:02.120Z; freeze the legacy system and run `chatferry run --delta --final` again',
      undefined,
    ],
    [
      'one of each kind, singular',
      { users: 1, groups: 1, members: 1, messages: 1 },
      'the source is still being written: 1 user, 1 group, 1 member, 1 message changed',
      undefined,
    ],
    [
      'an entity without a change-time column',
      { ...none, members: null },
      undefined,
      'cannot tell whether members changed after the final read: their source queries return no change-time column (updated_at)',
    ],
  ] as const)('%s', (_name, changes, warning, unknown) => {
    const record = cutoverChecked(T, changes, T + 5000)
    const said = describeSourceChanges(record)
    if (warning === undefined) {
      expect(said.warning).toBeUndefined()
    } else {
      expect(said.warning).toContain(warning)
    }
    expect(said.unknown).toBe(unknown)
    expect(record.sourceStillChanging).toBe(warning !== undefined)
  })

  it('records the counts, their sum and both times', () => {
    expect(cutoverChecked(T, { ...none, messages: 3, groups: null }, T + 1000)).toEqual({
      final: true,
      readStartedAt: '2026-11-30T18:00:02.120Z',
      checkedAt: '2026-11-30T18:00:03.120Z',
      changedAfterRead: { users: 0, groups: null, members: 0, messages: 3 },
      changedRows: 3,
      sourceStillChanging: true,
    })
  })
})

describe('describeBlockers', () => {
  it('lists every blocker, then how to go on', () => {
    expect(describeBlockers(['a', 'b'])).toBe(
      'run --delta --final refuses to start while the bulk load still has work: a; b; then run `chatferry run --delta --final` again',
    )
  })
})
