/**
 * Contract of the sandbox's member writes over real HTTP and through the typed client: add (per-uid
 * results, 25 a call, the documented precedence), scope, kick, ban, unban — each shown by the
 * member and banned lists, each documented refusal with its code, the request log per call and the
 * webhooks the platform documents for them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import type { PlatformError } from '../../../src/target/errors.ts'
import { WebhookEnvelope } from '../../../src/target/webhooks.ts'
import { chatRaw, chatWorld, chatWrites, hookUp, webhookReceiver } from '../../helpers/chat-world.ts'
import { seedUsers, startTestSandbox, type TestApp, type TestSandbox } from '../../helpers/sandbox.ts'

let t: TestSandbox
beforeAll(async () => {
  t = await startTestSandbox()
})
afterAll(async () => {
  await t?.close()
})

async function members(app: TestApp): Promise<Record<string, string>> {
  return Object.fromEntries((await app.client.listGroupMembers('g1')).data.map((m) => [m.uid, m.scope ?? '']))
}
async function banned(app: TestApp): Promise<string[]> {
  return (await app.client.listBannedUsers('g1')).data.map((m) => m.uid)
}
const codeOf = (e: unknown) => (e as PlatformError).code

describe('POST /groups/{guid}/members', () => {
  it('adds with scopes and bans, one result per uid in its list, precedence admin > moderator > participant', async () => {
    const { app } = await chatWorld(t)
    const raw = await chatRaw(app, 'POST', 'groups/g1/members', {
      admins: ['dave'],
      participants: ['dave', 'erin', 'bob', 'ghost'],
    })
    expect(raw.status).toBe(200)
    expect(Object.keys(raw.body.data.admins)).toEqual(['dave'])
    expect(raw.body.data.admins.dave).toMatchObject({ success: true, data: { category: 'action', type: 'groupMember', data: { action: 'added' } } })
    expect(raw.body.data.participants).toMatchObject({
      erin: { success: true },
      bob: { success: false, error: { code: 'ERR_ALREADY_JOINED' } },
      ghost: { success: false, error: { code: 'ERR_UID_NOT_FOUND' } },
    })
    expect(await members(app)).toEqual({ alice: 'admin', bob: 'participant', carol: 'moderator', dave: 'admin', erin: 'participant' })
    expect((await chatWrites(t, app))[0]?.items).toEqual([
      { key: 'g1_member_dave', result: 'applied' },
      { key: 'g1_member_erin', result: 'applied' },
      { key: 'g1_member_bob', result: 'refused', code: 'ERR_ALREADY_JOINED' },
      { key: 'g1_member_ghost', result: 'refused', code: 'ERR_UID_NOT_FOUND' },
    ])
  })

  it('the client returns per-uid results; usersToBan bans; a banned user cannot be re-added', async () => {
    const { app } = await chatWorld(t)
    const res = await app.client.addMembers('g1', { moderators: ['dave'], usersToBan: ['erin'] })
    expect(Object.fromEntries(res.results)).toEqual({ dave: { ok: true, list: 'moderators' }, erin: { ok: true, list: 'usersToBan' } })
    expect(await banned(app)).toEqual(['erin'])
    const again = await app.client.addMembers('g1', { participants: ['erin'] })
    expect(again.results.get('erin')).toMatchObject({ ok: false, code: 'ERR_BANNED_GROUPMEMBER' })
  })

  it('more than 25 users in one call: the client refuses before sending, the sandbox answers 400', async () => {
    const { app } = await chatWorld(t)
    const many = Array.from({ length: 26 }, (_, i) => `x${i}`)
    await seedUsers(app, many)
    await expect(app.client.addMembers('g1', { participants: many })).rejects.toBeInstanceOf(TypeError)
    const res = await chatRaw(app, 'POST', 'groups/g1/members', { participants: many })
    expect(res.status).toBe(400)
    expect(res.body.error.code).toBe('ERR_BAD_REQUEST')
    expect(Object.keys(await members(app))).toHaveLength(3)
    expect(await app.client.addMembers('g1', { participants: many.slice(0, 25) })).toMatchObject({ missing: [] })
  })

  it('an unknown group: ERR_GUID_NOT_FOUND for the whole call', async () => {
    const { app } = await chatWorld(t)
    expect(await app.client.addMembers('nope', { participants: ['dave'] }).catch(codeOf)).toBe('ERR_GUID_NOT_FOUND')
    expect((await chatWrites(t, app))[0]?.items).toEqual([{ key: 'nope_member_dave', result: 'refused', code: 'ERR_GUID_NOT_FOUND' }])
  })
})

describe('scope, kick, ban, unban', () => {
  it('each changes the lists, and sent again answers the documented "already" code', async () => {
    const { app } = await chatWorld(t)
    expect(await app.client.changeMemberScope('g1', 'bob', 'moderator')).toMatchObject({ scope: 'moderator' })
    expect(await app.client.changeMemberScope('g1', 'bob', 'moderator').catch(codeOf)).toBe('ERR_SAME_SCOPE')
    await app.client.kickMember('g1', 'carol')
    expect(await app.client.kickMember('g1', 'carol').catch(codeOf)).toBe('ERR_NOT_A_MEMBER')
    await app.client.banMember('g1', 'bob')
    expect(await app.client.banMember('g1', 'bob').catch(codeOf)).toBe('ERR_ALREADY_BANNED')
    expect(await members(app)).toEqual({ alice: 'admin' })
    expect(await banned(app)).toEqual(['bob'])
    expect(await app.client.findGroupMember('g1', 'bob')).toMatchObject({ state: 'banned' })
    await app.client.unbanMember('g1', 'bob')
    expect(await app.client.unbanMember('g1', 'bob').catch(codeOf)).toBe('ERR_NOT_A_BANNED_USER')
    expect(await banned(app)).toEqual([])
    expect(await app.client.findGroupMember('g1', 'bob')).toEqual({ state: 'none' })
    expect(await app.client.findGroupMember('g1', 'alice')).toMatchObject({ state: 'member', member: { scope: 'admin' } })
    expect(
      (await chatWrites(t, app)).map((e) => `${e.endpoint} ${e.status} ${e.items?.map((i) => `${i.key}:${i.result}:${i.code ?? ''}`).join(',')}`),
    ).toEqual([
      'members.scope 200 g1_member_bob:applied:',
      'members.scope 400 g1_member_bob:refused:ERR_SAME_SCOPE',
      'members.kick 200 g1_member_carol:applied:',
      'members.kick 400 g1_member_carol:refused:ERR_NOT_A_MEMBER',
      'members.ban 200 g1_member_bob:applied:',
      'members.ban 400 g1_member_bob:refused:ERR_ALREADY_BANNED',
      'members.unban 200 g1_member_bob:applied:',
      'members.unban 400 g1_member_bob:refused:ERR_NOT_A_BANNED_USER',
    ])
  })

  it.each([
    { name: 'scope of a non-member', method: 'PUT', path: 'groups/g1/members/dave', body: { scope: 'admin' }, code: 'ERR_NOT_A_MEMBER' },
    { name: 'a scope that does not exist', method: 'PUT', path: 'groups/g1/members/bob', body: { scope: 'owner' }, code: 'ERR_BAD_REQUEST' },
    { name: 'kick in an unknown group', method: 'DELETE', path: 'groups/nope/members/bob', code: 'ERR_GUID_NOT_FOUND' },
    { name: 'ban of an unknown user', method: 'POST', path: 'groups/g1/bannedusers/ghost', code: 'ERR_UID_NOT_FOUND' },
    { name: 'unban of a member who is not banned', method: 'DELETE', path: 'groups/g1/bannedusers/bob', code: 'ERR_NOT_A_BANNED_USER' },
  ])('$name → $code, nothing changes', async ({ method, path, body, code }) => {
    const { app } = await chatWorld(t)
    const res = await chatRaw(app, method, path, body)
    expect(res.body.error.code).toBe(code)
    expect(await members(app)).toEqual({ alice: 'admin', bob: 'participant', carol: 'moderator' })
    expect(await banned(app)).toEqual([])
  })

  it('a deactivated user cannot be kicked (ERR_UID_NOT_FOUND): kick before deactivating', async () => {
    const { app } = await chatWorld(t)
    await app.client.deactivateUsers(['carol'])
    expect(await app.client.kickMember('g1', 'carol').catch(codeOf)).toBe('ERR_UID_NOT_FOUND')
  })

  it('a non-member can be banned (as usersToBan allows) and is listed as banned', async () => {
    const { app } = await chatWorld(t)
    await app.client.banMember('g1', 'dave')
    expect(await banned(app)).toEqual(['dave'])
  })
})

describe('webhooks', () => {
  it('added, scope changed, kicked, banned, unbanned reach a webhook with those triggers, in the documented envelope', async () => {
    const hook = await webhookReceiver()
    try {
      const { app } = await chatWorld(t)
      const triggers = [
        'group_member_added',
        'group_member_scope_changed',
        'group_member_kicked',
        'group_member_banned',
        'group_member_unbanned',
      ] as const
      await hookUp(t, app, hook.url, triggers)
      await app.client.addMembers('g1', { participants: ['dave'] })
      await app.client.changeMemberScope('g1', 'dave', 'admin')
      await app.client.kickMember('g1', 'dave')
      await app.client.banMember('g1', 'erin')
      await app.client.unbanMember('g1', 'erin')
      await t.sandbox.whenIdle()
      const envelopes = hook.received.map((r) => WebhookEnvelope.parse(r))
      expect(envelopes.map((e) => e.trigger).sort()).toEqual([...triggers].sort())
      expect(envelopes.find((e) => e.trigger === 'group_member_kicked')?.data).toMatchObject({
        group: { guid: 'g1' },
        members: { dave: { uid: 'dave' } },
      })
    } finally {
      await hook.close()
    }
  })
})
