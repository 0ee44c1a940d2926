/**
 * The sandbox's management fidelity for fleets, over real HTTP: the extension and team endpoints
 * as published (per-id and per-email answers, the documented error codes, the 25-member limit,
 * each call in the app's request log), the typed client over them, and the app rules (name length,
 * version, region, the creation limit, a deleted app archived).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { EXTENSION_IDS } from '../../../src/target/management-schemas.ts'
import { http, MGMT, mgmtRaw, startTestSandbox, type TestSandbox } from '../../helpers/sandbox.ts'

let t: TestSandbox

beforeAll(async () => {
  t = await startTestSandbox({ maxApps: 14 })
})
afterAll(async () => {
  await t?.close()
})

describe('extensions', () => {
  it('enables and disables by id, lists the published extensions with their state, and logs each call', async () => {
    const app = await t.app()
    const on = await mgmtRaw(t.sandbox, `/apps/${app.id}/extensions`, { body: { enabled: ['polls', 'reactions'] } })
    expect(on.status).toBe(200)
    expect(Object.keys(on.body.data.enabled).sort()).toEqual(['polls', 'reactions'])
    expect(on.body.data.enabled.polls.success).toBe(true)
    const list = await t.mgmt.listExtensions(app.id)
    expect(list.map((e) => e.id).sort()).toEqual([...EXTENSION_IDS].sort())
    expect(
      list
        .filter((e) => e.enabled)
        .map((e) => e.id)
        .sort(),
    ).toEqual(['polls', 'reactions'])
    const res = await t.mgmt.setExtensions(app.id, { enabled: ['polls'], disabled: ['reactions'] })
    expect(res.enabled.get('polls')?.success).toBe(true)
    expect(res.disabled.get('reactions')?.success).toBe(true)
    expect((await t.mgmt.listExtensions(app.id)).filter((e) => e.enabled).map((e) => e.id)).toEqual(['polls'])
    await t.sandbox.whenIdle()
    const log = (await t.sandbox.requests(app.id)).filter((r) => r.endpoint === 'extensions')
    expect(log.map((r) => `${r.method} ${r.status}`)).toEqual(['POST 200', 'GET 200', 'POST 200', 'GET 200'])
  })

  it('an id not in the published list fails alone (ERR_EXTENSION_NOT_FOUND), per id as published; the others are enabled', async () => {
    const app = await t.app()
    const res = await mgmtRaw(t.sandbox, `/apps/${app.id}/extensions`, { body: { enabled: ['polls', 'pollz'] } })
    expect(res.status).toBe(200)
    expect(res.body.data.enabled.polls).toMatchObject({ success: true })
    expect(res.body.data.enabled.pollz).toMatchObject({ success: false, error: { code: 'ERR_EXTENSION_NOT_FOUND' } })
    expect((await t.mgmt.listExtensions(app.id)).filter((e) => e.enabled).map((e) => e.id)).toEqual(['polls'])
  })

  it('refuses an empty call and an id both enabled and disabled (400)', async () => {
    const app = await t.app()
    expect((await mgmtRaw(t.sandbox, `/apps/${app.id}/extensions`, { body: {} })).status).toBe(400)
    const both = await mgmtRaw(t.sandbox, `/apps/${app.id}/extensions`, { body: { enabled: ['polls'], disabled: ['polls'] } })
    expect(both.status).toBe(400)
  })

  it('needs the management key and secret', async () => {
    const app = await t.app()
    const res = await http(`${t.sandbox.url}/apps/${app.id}/extensions`, { headers: { key: MGMT.key, secret: 'wrong' } })
    expect(res.status).toBe(401)
    expect(res.body.error.code).toBe('AUTH_ERR_APIKEY_NOT_FOUND')
  })
})

describe('team members (collaborators)', () => {
  it('adds admins and moderators by email, lists them, removes them; answers per email', async () => {
    const app = await t.app()
    const add = await t.mgmt.setCollaborators(app.id, { admins: ['Ann@Example.com'], moderators: ['mo@example.com'] })
    expect(add.get('admins')?.get('ann@example.com')?.success).toBe(true)
    expect(add.get('moderators')?.get('mo@example.com')?.success).toBe(true)
    const list = await t.mgmt.listCollaborators(app.id)
    expect(list.map((c) => [c.email, c.role])).toEqual([
      ['ann@example.com', 'admin'],
      ['mo@example.com', 'moderator'],
    ])
    // Adding again keeps one row; the role asked last wins.
    await t.mgmt.setCollaborators(app.id, { moderators: ['ann@example.com'] })
    expect((await t.mgmt.listCollaborators(app.id)).map((c) => [c.email, c.role])).toEqual([
      ['ann@example.com', 'moderator'],
      ['mo@example.com', 'moderator'],
    ])
    const rm = await t.mgmt.setCollaborators(app.id, { collaboratorsToRemove: ['mo@example.com', 'nobody@example.com'] })
    expect(rm.get('collaboratorsToRemove')?.get('mo@example.com')?.success).toBe(true)
    expect(rm.get('collaboratorsToRemove')?.get('nobody@example.com')?.error?.code).toBe('ERR_NOT_A_COLLABORATOR')
    expect((await t.mgmt.listCollaborators(app.id)).map((c) => c.email)).toEqual(['ann@example.com'])
  })

  it("the app owner's email is refused per email (ERR_ALREADY_AN_OWNER), the others are added", async () => {
    const app = await t.app()
    const owner = (app.record.appOwner as { email: string }).email
    const res = await mgmtRaw(t.sandbox, `/apps/${app.id}/collaborators`, { body: { admins: [owner, 'x@example.com'] } })
    expect(res.status).toBe(200)
    expect(res.body.data.admins[owner].error.code).toBe('ERR_ALREADY_AN_OWNER')
    expect(res.body.data.admins['x@example.com'].success).toBe(true)
    expect(res.body.data.moderators).toEqual([])
  })

  it('more than 25 members refuses the whole call; nothing is added', async () => {
    const app = await t.app()
    const emails = Array.from({ length: 26 }, (_, i) => `m${i}@example.com`)
    const res = await mgmtRaw(t.sandbox, `/apps/${app.id}/collaborators`, { body: { admins: emails } })
    expect(res.status).toBe(400)
    expect(res.body.error.message).toContain('at most 25')
    expect(await t.mgmt.listCollaborators(app.id)).toEqual([])
    expect((await mgmtRaw(t.sandbox, `/apps/${app.id}/collaborators`, { body: { admins: emails.slice(0, 25) } })).status).toBe(200)
  })

  it('refuses a body that is not emails (400)', async () => {
    const app = await t.app()
    const res = await mgmtRaw(t.sandbox, `/apps/${app.id}/collaborators`, { body: { admins: ['not an email'] } })
    expect(res.status).toBe(400)
  })
})

describe('app rules', () => {
  it('refuses a name over 100 characters, a version other than "3" and an unknown region', async () => {
    const long = await mgmtRaw(t.sandbox, '/apps', { body: { name: 'x'.repeat(101), region: 'us' } })
    expect(long.status).toBe(400)
    const version = await mgmtRaw(t.sandbox, '/apps', { body: { name: 'v2 app', region: 'us', version: '2' } })
    expect(version.status).toBe(400)
    const region = await mgmtRaw(t.sandbox, '/apps', { body: { name: 'mars app', region: 'mars' } })
    expect(region.status).toBe(400)
  })

  it('creation is logged under the new app; a deleted app is archived (ERR_APP_ARCHIVED), no longer listed, and its extensions go with it', async () => {
    const created = await t.mgmt.createApp({ name: 'Archive me', region: 'eu', version: '3' })
    await t.mgmt.setExtensions(created.appId, { enabled: ['polls'] })
    await t.sandbox.whenIdle()
    expect((await t.sandbox.requests(created.appId)).filter((r) => r.endpoint === 'apps').map((r) => r.method)).toEqual(['POST'])
    await t.mgmt.deleteApp(created.appId)
    const after = await mgmtRaw(t.sandbox, `/apps/${created.appId}/extensions`)
    expect(after.body.error.code).toBe('ERR_APP_ARCHIVED')
    expect((await t.mgmt.listApps({ searchKey: 'Archive me' })).map((a) => a.id)).toEqual([])
  })

  it('refuses creation beyond the account limit (ERR_APP_CREATION_FAILED_MAX_LIMIT)', async () => {
    let last = 0
    for (let i = 0; i < 20; i++) {
      const res = await mgmtRaw(t.sandbox, '/apps', { body: { name: `limit ${i}`, region: 'in' } })
      last = res.status
      if (res.status !== 200) {
        expect(res.body.error.code).toBe('ERR_APP_CREATION_FAILED_MAX_LIMIT')
        break
      }
    }
    expect(last).toBe(403)
  })
})
