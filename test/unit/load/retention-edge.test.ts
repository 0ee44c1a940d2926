/**
 * The retention-edge arithmetic (`src/plan/retention-edge.ts`): which messages will be older than
 * the retention window when the load at the quota reaches them.
 */
import { describe, expect, it } from 'vitest'

import { retentionEdge, retentionEdgeAdvice, sendOffsetMs } from '../../../src/plan/retention-edge.ts'

const DAY = 86_400_000
const START = Date.UTC(2026, 10, 24, 0, 0) // minute-aligned
/** The minute of a message whose edge (sentAt + 10 days) comes `ms` after the start. */
const edgeIn = (ms: number) => (START - 10 * DAY + ms) / 60_000

describe('send time of a queue position', () => {
  it.each([
    [0, 60, 50, 0],
    [49, 60, 50, 0],
    [50, 60, 50, 1000],
    [149, 60, 50, 2000],
    [10, 1, 5, 120_000],
  ])('position %i at %i req/min × %i items → %i ms', (p, rpm, ipr, ms) => {
    expect(sendOffsetMs(p, rpm, ipr)).toBe(ms)
  })
})

describe('messages aging out before their turn', () => {
  const base = { startMs: START, retentionDays: 10, requestsPerMinute: 1, itemsPerRequest: 10 }
  it.each<[string, { itemsAhead: number; messages: [number, number][]; requestsPerMinute?: number }, number]>([
    ['nothing to send', { itemsAhead: 0, messages: [] }, 0],
    ['nothing near the edge: a day of margin, the load takes 3 minutes', { itemsAhead: 0, messages: [[edgeIn(DAY), 30]] }, 0],
    // Requests at 0, 1, 2 min; the edge at exactly 1 min: sent at 1 min is not after it (strict).
    ['some cross: 30 messages whose edge is 1 minute in, only the third request is late', { itemsAhead: 0, messages: [[edgeIn(60_000), 30]] }, 10],
    [
      'edge already passed for the oldest minute: all of it ages out',
      {
        itemsAhead: 0,
        messages: [
          [edgeIn(-60_000), 4],
          [edgeIn(DAY), 5],
        ],
      },
      4,
    ],
    // 20 items ahead push the messages to requests 2 and 3 (2 and 3 min): both after a 1-minute edge.
    ['items ahead (users, groups, members) push messages past the edge', { itemsAhead: 20, messages: [[edgeIn(60_000), 15]] }, 15],
    ['a faster quota sends them in time', { itemsAhead: 20, messages: [[edgeIn(60_000), 15]], requestsPerMinute: 10 }, 0],
    ['a slightly faster quota: only the last request is late', { itemsAhead: 20, messages: [[edgeIn(60_000), 15]], requestsPerMinute: 2 }, 5],
    // Oldest first: a newer minute has a later edge and can be safe while an older one is not.
    // 5 past their edge; then 30 whose edge is at 2 min: positions 5..34, only request 3 (30..34, 3 min) is late.
    [
      'per minute, oldest first',
      {
        itemsAhead: 0,
        messages: [
          [edgeIn(-60_000), 5],
          [edgeIn(2 * 60_000), 30],
        ],
      },
      10,
    ],
  ])('%s → %s', (_name, o, expected) => {
    const edge = retentionEdge({ ...base, ...o })
    expect(edge.agingOut).toBe(expected)
    expect(edge.messages).toBe(o.messages.reduce((a, [, c]) => a + c, 0))
  })

  it('names the oldest and newest minute that age out, and when messages start and end', () => {
    const edge = retentionEdge({
      ...base,
      itemsAhead: 10,
      messages: new Map([
        [edgeIn(-60_000), 3],
        [edgeIn(0), 12],
        [edgeIn(DAY), 1],
      ]),
    })
    // Positions 10..12 (request 1, at 1 min): past their edge; 13..24 (requests 1–2): after an edge at 0.
    expect(edge.agingOut).toBe(15)
    expect(edge.oldestAgingOut).toBe(new Date(START - 10 * DAY - 60_000).toISOString())
    expect(edge.newestAgingOut).toBe(new Date(START - 10 * DAY).toISOString())
    expect(edge.firstMessageSeconds).toBe(60)
    expect(edge.lastMessageSeconds).toBe(120)
    expect(retentionEdgeAdvice(edge, 10)).toMatch(/^15 of 16 messages to send .* older than 10 days/)
    expect(retentionEdgeAdvice(retentionEdge({ ...base, itemsAhead: 0, messages: [] }), 10)).toBe('')
  })
})
