import { describe, expect, it } from 'vitest'

import { runCounts } from '../../../src/cli/commands/runs.ts'

const lane = {
  requests: 7,
  rateLimited: 1,
  done: { 'message.edit': 2, 'group.update': 1 },
  rejected: { 'member.scope': 1 },
  reported: {},
  heldBack: { 'message.delete': 2 },
  confirmed: 1,
  handedBack: 0,
  fenced: 0,
}

describe('runCounts: what a run row says it did', () => {
  it.each([
    { name: 'nothing recorded', stats: null, counts: {} },
    { name: 'a heartbeat without counters', stats: { final: true }, counts: {} },
    {
      name: "a loader's end",
      stats: { counters: { requests: 3, itemsDone: 120, itemsRejected: 2, rateLimited: 0, other: 9 } },
      counts: { requests: 3, itemsDone: 120, itemsRejected: 2, rateLimited: 0 },
    },
    {
      name: "a run's plan",
      stats: { plan: { entities: { users: { sourceRows: 4, ledger: { inserted: 4 } }, messages: { sourceRows: 10, ledger: { inserted: 9 } } } } },
      counts: { sourceRows: 14, newItems: 13 },
    },
    {
      name: "a run's update lane (updates by kind summed)",
      stats: { updateLane: lane },
      counts: { chatRequests: 7, updatesDone: 3, updatesRejected: 1, updatesHeldBack: 2 },
    },
    {
      name: 'an update lane whose counts are not numbers',
      stats: { updateLane: { requests: 'x', done: { a: 'y', b: 2 }, rejected: null } },
      counts: { updatesDone: 2 },
    },
    {
      name: 'an update lane that had nothing to do',
      stats: { updateLane: { requests: 0, done: {}, rejected: {}, reported: {}, heldBack: {}, confirmed: 0 } },
      counts: {},
    },
  ])('$name', ({ stats, counts }) => expect(runCounts(stats)).toEqual(counts))
})
