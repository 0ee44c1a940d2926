/** `orphanedParts`: the keys a split message's earlier parts may have had, for messages only. */
import { describe, expect, it } from 'vitest'

import { messageMuid, partMuid } from '../../../mappings/index.ts'
import { ORPHANED_PART_REASON, orphanedParts } from '../../../src/plan/orphaned-parts.ts'

describe('orphanedParts', () => {
  it('users, groups and members map to one item each: nothing is looked for', () => {
    for (const e of ['users', 'groups', 'members'] as const) {
      expect(orphanedParts(e, 20)).toBeUndefined()
    }
  })

  it.each([
    ['one part now: parts 2…20 are candidates', 1, 20, 2, 20],
    ['three parts now: parts 4…20', 3, 20, 4, 20],
    ['a smaller maxParts still looks up to 20 (a message split under the default)', 1, 5, 2, 20],
    ['a larger maxParts looks up to it', 2, 30, 3, 30],
  ])('%s', (_name, kept, maxParts, first, last) => {
    const parts = orphanedParts('messages', maxParts)
    const muid = messageMuid('42')
    const keptKeys = [muid, ...Array.from({ length: kept - 1 }, (_, i) => partMuid(muid, i + 2))]
    const want = Array.from({ length: last - first + 1 }, (_, i) => partMuid(muid, first + i))
    expect(parts?.candidates('42', keptKeys)).toEqual(want)
    expect(parts?.reason).toBe(ORPHANED_PART_REASON)
  })

  it('the reason classifies as the longText policy (a message.delete under changes.edits)', () => {
    expect(ORPHANED_PART_REASON).toMatch(/^policy:longText: no longer a part of its message/)
  })
})
