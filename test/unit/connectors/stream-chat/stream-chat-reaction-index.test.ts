/**
 * The Stream Chat v2 export's compact reaction index (connectors/stream-chat/export/reaction-index.ts)
 * gives back what a plain map of lists would: each message's reactions in the order they were added,
 * shaped as decoded (no `at` key without a time), undefined for a message without any.
 */
import { describe, expect, it } from 'vitest'

import { ReactionIndex } from '../../../../connectors/stream-chat/export/reaction-index.ts'
import type { LegacyReaction } from '../../../../src/model/records.ts'

describe('ReactionIndex', () => {
  it('gives each message its reactions in order, past the arrays first size', () => {
    const index = new ReactionIndex()
    const plain = new Map<string, LegacyReaction[]>()
    // 5,000 reactions over 700 messages, interleaved; times absent, 0 and negative among them.
    for (let i = 0; i < 5000; i++) {
      const messageId = `msg-${(i * 7) % 700}`
      const at = i % 5 === 0 ? undefined : i % 5 === 1 ? 0 : i % 5 === 2 ? -1000 : 1_704_153_600_000 + i
      const r: LegacyReaction = { emoji: i % 3 === 0 ? 'like' : '👍', userId: `user-${i % 41}`, ...(at !== undefined ? { at } : {}) }
      index.add(messageId, r)
      plain.set(messageId, [...(plain.get(messageId) ?? []), r])
    }
    for (const [messageId, list] of plain) {
      expect(index.get(messageId)).toStrictEqual(list)
    }
    expect(Object.keys(index.get('msg-0')?.[0] ?? {})).toEqual(['emoji', 'userId'])
    expect(Object.keys(index.get('msg-7')?.[0] ?? {})).toEqual(['emoji', 'userId', 'at'])
  })

  it('has nothing for a message without reactions, and hands out new objects each time', () => {
    const index = new ReactionIndex()
    expect(index.get('msg-1')).toBeUndefined()
    index.add('msg-1', { emoji: 'like', userId: 'u1', at: 5 })
    index.add('msg-1', { emoji: 'like', userId: 'u1', at: 5 })
    const a = index.get('msg-1')
    expect(a).toStrictEqual([
      { emoji: 'like', userId: 'u1', at: 5 },
      { emoji: 'like', userId: 'u1', at: 5 },
    ])
    expect(index.get('msg-1')).not.toBe(a)
    expect(index.get('msg-2')).toBeUndefined()
  })
})
