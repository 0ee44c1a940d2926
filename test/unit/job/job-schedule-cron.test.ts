/** `cronProblem`: what `chatferry schedule --cron` accepts is what pg-boss's cron pass can evaluate (cron-parser). */
import { describe, expect, it } from 'vitest'

import { cronProblem, scheduleQueueName } from '../../../src/job/job-schedule.ts'

describe('cronProblem', () => {
  it.each([
    ['*/15 * * * *', undefined],
    ['0 2 * * 1-5', undefined],
    ['* * * * * *', undefined],
    ['30 */5 * * * *', undefined],
    ['', /empty/],
    ['   ', /empty/],
    ['* * * *', /has 4 field\(s\)/],
    ['* * * * * * *', /has 7 field\(s\)/],
    ['61 * * * *', /"61 \* \* \* \*" is not a cron expression/],
    ['* 25 * * *', /is not a cron expression/],
    ['every 15 minutes', /has 3 field\(s\)/],
    ['a b c d e', /"a b c d e" is not a cron expression/],
  ])('%j', (cron, expected) => {
    const problem = cronProblem(cron)
    if (expected === undefined) {
      expect(problem).toBeUndefined()
    } else {
      expect(problem).toMatch(expected)
    }
  })

  it('one queue per job', () => {
    expect(scheduleQueueName('acme-chat')).toBe('chatferry-schedule-acme-chat')
  })
})
