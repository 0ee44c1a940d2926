/**
 * The update lane's pure rules, table-tested: how an update's key and body become a call
 * (apply-update.ts), when the platform already holds an update's state (check-ambiguous-update.ts),
 * a message's conversation for the lookup (find-platform-message.ts), the counts per kind
 * (update-progress.ts) and how the two lanes' outcomes make the run's (run-job-loader.ts).
 */
import { describe, expect, it } from 'vitest'

import { combineOutcomes } from '../../../src/job/run-job-loader.ts'
import { memberOf, messageEditBody, scopeOf, senderOf } from '../../../src/load/apply-update.ts'
import { messageMatches, recordMatches } from '../../../src/load/check-ambiguous-update.ts'
import { conversationIdOf, messageShapeOf } from '../../../src/load/find-platform-message.ts'
import type { LoadOutcome } from '../../../src/load/loader.ts'
import { judgeUpdateFailure, type UpdateFailureVerdict } from '../../../src/load/update-failure-rule.ts'
import type { UpdateLaneOutcome } from '../../../src/load/update-lane.ts'
import { emptyUpdateCounters } from '../../../src/load/update-lane-run.ts'
import { formatUpdateTable, updateReport, updateTotals } from '../../../src/load/update-progress.ts'
import type { FailureKind } from '../../../src/target/errors.ts'

describe('memberOf: the group and user of a member update', () => {
  it.each<[string, string, Record<string, unknown>, { guid: string; uid: string } | string]>([
    ['from the key', 'g1_member_u1', {}, { guid: 'g1', uid: 'u1' }],
    ['underscores in the ids', 'team_a_member_user_b', {}, { guid: 'team_a', uid: 'user_b' }],
    ['the body wins', 'x_member_y', { guid: 'g2', uid: 'u2' }, { guid: 'g2', uid: 'u2' }],
    ['not a member key', 'alice', {}, 'is not <guid>_member_<uid>'],
  ])('%s', (_name, targetKey, body, expected) => {
    if (typeof expected === 'string') {
      expect(() => memberOf({ targetKey, body })).toThrow(expected)
    } else {
      expect(memberOf({ targetKey, body })).toEqual(expected)
    }
  })

  it('scope and sender must be there', () => {
    expect(scopeOf({ scope: 'moderator' })).toBe('moderator')
    expect(() => scopeOf({ scope: 'owner' })).toThrow('scope')
    expect(senderOf({ sender: 'alice' })).toBe('alice')
    expect(() => senderOf({})).toThrow('sender')
  })
})

describe('messageEditBody: PUT /messages/{id} from a message.edit body', () => {
  it.each<[string, Record<string, unknown>, unknown]>([
    ['text at the top', { sender: 'a', text: 'new' }, { data: { text: 'new' } }],
    ['text in data', { sender: 'a', data: { text: 'new' } }, { data: { text: 'new' } }],
    [
      'metadata and tags',
      { sender: 'a', data: { text: 't', metadata: { legacy: { id: '1' } } }, tags: ['x'] },
      { data: { text: 't', metadata: { legacy: { id: '1' } } }, tags: ['x'] },
    ],
    ['fields the PUT does not take are left out', { sender: 'a', data: { text: 't', entities: {} }, muid: 'm' }, { data: { text: 't' } }],
  ])('%s', (_name, body, expected) => {
    expect(messageEditBody(body)).toEqual(expected)
  })
})

describe('recordMatches: the platform holds what an update sets', () => {
  const fields = ['name', 'avatar', 'metadata', 'tags', 'type']
  it.each<[string, Record<string, unknown>, Record<string, unknown>, boolean]>([
    ['same name', { name: 'Alice' }, { name: 'Alice', avatar: 'x' }, true],
    ['other name', { name: 'Alicia' }, { name: 'Alice' }, false],
    ['metadata deep', { metadata: { a: { b: 1 } } }, { metadata: { a: { b: 1 } } }, true],
    ['metadata differs deep down', { metadata: { a: { b: 1 } } }, { metadata: { a: { b: 2 } } }, false],
    ['tags as a set', { tags: ['b', 'a'] }, { tags: ['a', 'b'] }, true],
    ['a field the body does not set is not compared', { name: 'A' }, { name: 'A', type: 'public' }, true],
    ['unset and absent', { unset: ['avatar'] }, { name: 'A' }, true],
    ['unset but still there', { unset: ['avatar'] }, { avatar: 'https://x/a.png' }, false],
    ['made private', { type: 'private' }, { type: 'public' }, false],
  ])('%s', (_name, body, record, expected) => {
    expect(recordMatches(record, body, fields)).toBe(expected)
  })

  it.each<[string, Record<string, unknown>, { data?: Record<string, unknown>; tags?: string[] }, boolean]>([
    ['edited text there', { sender: 'a', text: 'new' }, { data: { text: 'new', entities: {} } }, true],
    ['old text', { sender: 'a', text: 'new' }, { data: { text: 'old' } }, false],
    [
      'tombstone metadata',
      { sender: 'a', data: { text: 'deleted', metadata: { d: true } } },
      { data: { text: 'deleted', metadata: { d: true } } },
      true,
    ],
    ['tags differ', { sender: 'a', tags: ['x'] }, { data: {}, tags: ['y'] }, false],
  ])('messageMatches: %s', (_name, body, message, expected) => {
    expect(messageMatches(message, body)).toBe(expected)
  })
})

describe('the message lookup', () => {
  it.each<[string, { sender: string; receiverType: string; receiver: string }, string]>([
    ['a group', { sender: 'b', receiverType: 'group', receiver: 'g1' }, 'group_g1'],
    ['a direct message, sorted', { sender: 'zed', receiverType: 'user', receiver: 'amy' }, 'amy_user_zed'],
  ])('conversationIdOf: %s', (_name, m, expected) => {
    expect(conversationIdOf(m)).toBe(expected)
  })

  it('reads a stored payload; anything else is no message', () => {
    expect(messageShapeOf('{"muid":"m","sender":"a","receiverType":"user","receiver":"b","sentAt":5,"data":{"text":"t"}}')).toEqual({
      sender: 'a',
      receiverType: 'user',
      receiver: 'b',
      sentAt: 5,
      data: { text: 't' },
    })
    expect(messageShapeOf(null)).toBeUndefined()
    expect(messageShapeOf('{"uid":"a"}')).toBeUndefined()
  })
})

describe('updateReport: the ledger counts per kind', () => {
  it('folds statuses, leaves unknown ones out and adds up remaining', () => {
    const report = updateReport([
      { entity: 'users', kind: 'user.update', status: 'done', n: 3 },
      { entity: 'users', kind: 'user.update', status: 'planned', n: 2 },
      { entity: 'users', kind: 'user.update', status: 'sent', n: 1 },
      { entity: 'messages', kind: 'message.edit', status: 'rejected', n: 1 },
      { entity: 'messages', kind: 'message.edit', status: 'reported', n: 4 },
      { entity: 'messages', kind: 'message.edit', status: 'whatever', n: 9 },
    ])
    expect(report).toEqual([
      {
        kind: 'message.edit',
        planned: 0,
        inFlight: 0,
        done: 0,
        rejected: 1,
        reported: 4,
        ignored: 0,
        superseded: 0,
        conflict: 0,
        dropped: 0,
        remaining: 0,
      },
      {
        kind: 'user.update',
        planned: 2,
        inFlight: 1,
        done: 3,
        rejected: 0,
        reported: 0,
        ignored: 0,
        superseded: 0,
        conflict: 0,
        dropped: 0,
        remaining: 3,
      },
    ])
    expect(updateTotals(report)).toMatchObject({ kind: 'all', done: 3, rejected: 1, remaining: 3, reported: 4 })
    expect(formatUpdateTable(report).split('\n')).toHaveLength(3)
    expect(formatUpdateTable([])).toBe('')
  })
})

describe('combineOutcomes: the run from both lanes', () => {
  const imports = (status: LoadOutcome['status']): LoadOutcome => ({
    status,
    stats: [],
    counters: {} as LoadOutcome['counters'],
  })
  const updates = (status: UpdateLaneOutcome['status']): UpdateLaneOutcome => ({
    status,
    counters: emptyUpdateCounters(),
    ...(status === 'failed' ? { error: new Error('lane failed') } : {}),
  })
  it.each<[string, LoadOutcome['status'], UpdateLaneOutcome['status'] | undefined, LoadOutcome['status']]>([
    ['no update lane', 'done', undefined, 'done'],
    ['both done', 'done', 'done', 'done'],
    ['an update rejected', 'done', 'rejected', 'rejected'],
    ['an item rejected, updates done', 'rejected', 'done', 'rejected'],
    ['the update lane failed', 'done', 'failed', 'failed'],
    ['the update lane stopped', 'rejected', 'stopped', 'stopped'],
    ['the import lane failed (worker)', 'failed', 'stopped', 'failed'],
    ['a worker stopped by a signal', 'stopped', 'stopped', 'stopped'],
  ])('%s', (_name, i, u, expected) => {
    const out = combineOutcomes(imports(i), u === undefined ? undefined : updates(u))
    expect(out.status).toBe(expected)
    if (u === 'failed' && i !== 'failed') {
      expect(out.error?.message).toBe('lane failed')
    }
  })
})

describe('judgeUpdateFailure: what a failed chat write means', () => {
  it.each<[string, FailureKind, number | undefined, string, boolean, UpdateFailureVerdict]>([
    ['an unknown user', 'http', 404, 'ERR_UID_NOT_FOUND', false, 'reject'],
    ['a role the app lacks', 'http', 404, 'ERR_ROLE_NOT_FOUND', false, 'reject'],
    ['not the sender (403 about the message)', 'http', 403, 'ERR_MESSAGE_NOT_A_SENDER', false, 'reject'],
    ['a bad body', 'http', 400, 'ERR_EMPTY_MESSAGE_TEXT', false, 'reject'],
    ['the key refused', 'http', 401, 'AUTH_ERR_APIKEY_NOT_FOUND', false, 'stop'],
    ['a key without full access', 'http', 403, 'AUTH_ERR_NO_ACCESS', false, 'stop'],
    ['the app deleted', 'http', 403, 'ERR_APP_ARCHIVED', false, 'stop'],
    ['a redirect', 'http', 302, 'HTTP_302', false, 'stop'],
    ['an insecure URL', 'refused', undefined, 'INSECURE_TRANSPORT', false, 'stop'],
    ['a 503', 'http', 503, 'ERR_SERVICE_UNAVAILABLE', true, 'retry'],
    ['a 500', 'http', 500, 'ERR_EXCEPTION', true, 'retry'],
    ['a timeout', 'timeout', undefined, 'TIMEOUT', true, 'retry'],
    ['a lost connection', 'network', undefined, 'NETWORK_ERROR', true, 'retry'],
  ])('%s → %s', (_name, kind, status, code, retryable, expected) => {
    expect(judgeUpdateFailure({ kind, status, code, retryable })).toBe(expected)
  })
})
