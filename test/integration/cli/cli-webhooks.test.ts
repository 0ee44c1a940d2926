/**
 * `chatferry webhooks …` as a user runs it: the CLI as a process, the sandbox's management
 * interface over HTTP. Bad input is refused before any request: the sandbox's request log, which
 * records every webhook request that reaches it, stays empty.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { runCli } from '../../helpers/ledger-fixtures.ts'
import { MGMT, startTestSandbox, type TestApp, type TestSandbox } from '../../helpers/sandbox.ts'
import { testSecret } from '../../helpers/secrets.ts'

let sb: TestSandbox
beforeAll(async () => {
  sb = await startTestSandbox()
})
afterAll(async () => {
  await sb?.close()
})

const env = (extra: Record<string, string> = {}) => ({
  CHATFERRY_MGMT_URL: sb.sandbox.url,
  CHATFERRY_MGMT_KEY: MGMT.key,
  CHATFERRY_MGMT_SECRET: MGMT.secret,
  ...extra,
})
const cli = (app: TestApp, args: string[], extra: Record<string, string> = {}) => runCli(['webhooks', ...args, '--app', app.id], env(extra)).done

describe('chatferry webhooks', () => {
  it('create, list, update, triggers add/list/remove, delete; the password is never printed', async () => {
    const app = await sb.app()
    const password = 'Hook2Pass9Word'
    const created = await cli(
      app,
      ['create', 'audit_1', '--name', 'Audit', '--url', 'https://hooks.example.com/cc', '--basic-auth', '--username', 'acme', '--retry-on-failure'],
      { CHATFERRY_WEBHOOK_PASSWORD: password },
    )
    expect(created.code, created.stderr).toBe(0)
    expect(created.stdout).toMatch(/ID\s+NAME\s+URL\s+ENABLED\s+VERSION/)
    expect(created.stdout).toMatch(/audit_1\s+Audit\s+https:\/\/hooks\.example\.com\/cc\s+yes\s+2/)
    const row = await sb.sandbox.store.selectFrom('webhooks').selectAll().where('app_id', '=', app.id).executeTakeFirstOrThrow()
    expect(row).toMatchObject({ id: 'audit_1', use_basic_auth: true, username: 'acme', password, retry_on_failure: true, version: '2' })

    const listed = await cli(app, ['list', '--json'])
    expect(listed.code, listed.stderr).toBe(0)
    expect(JSON.parse(listed.stdout)).toEqual([
      expect.objectContaining({ id: 'audit_1', name: 'Audit', webhookURL: 'https://hooks.example.com/cc', enabled: true, version: '2' }),
    ])

    const updated = await cli(app, ['update', 'audit_1', '--disabled', '--name', 'Audit log', '--no-retry-on-failure', '--json'])
    expect(updated.code, updated.stderr).toBe(0)
    expect(JSON.parse(updated.stdout)).toEqual([expect.objectContaining({ id: 'audit_1', name: 'Audit log', enabled: false })])
    const after = await sb.sandbox.store.selectFrom('webhooks').selectAll().where('app_id', '=', app.id).executeTakeFirstOrThrow()
    expect(after).toMatchObject({ retry_on_failure: false, use_basic_auth: true, password })

    const added = await cli(app, ['triggers', 'add', 'audit_1', 'message_sent', 'group_created'])
    expect(added.code, added.stderr).toBe(0)
    expect(added.stdout).toMatch(/message_sent\s+added/)
    expect(added.stdout).toMatch(/group_created\s+added/)
    const again = await cli(app, ['triggers', 'add', 'audit_1', 'message_sent', '--json'])
    expect(JSON.parse(again.stdout)).toEqual([expect.objectContaining({ trigger: 'message_sent', success: false })])
    const tlist = await cli(app, ['triggers', 'list', 'audit_1', '--json'])
    expect((JSON.parse(tlist.stdout) as { id: string }[]).map((x) => x.id)).toEqual(['message_sent', 'group_created'])
    const removed = await cli(app, ['triggers', 'remove', 'audit_1', 'group_created'])
    expect(removed.code, removed.stderr).toBe(0)
    const table = await cli(app, ['triggers', 'list', 'audit_1'])
    expect(table.stdout).toMatch(/TRIGGER\s+DESCRIPTION\n\s*message_sent/)
    expect(table.stdout).not.toContain('group_created')

    const noYes = await cli(app, ['delete', 'audit_1'])
    expect(noYes.code, 'delete without --yes is a usage error').toBe(2)
    const deleted = await cli(app, ['delete', 'audit_1', '--yes'])
    expect(deleted.code, deleted.stderr).toBe(0)
    expect(deleted.stdout).toContain('webhook audit_1 deleted')
    const empty = await cli(app, ['list'])
    expect(empty.stdout).toContain('no webhooks')
    const missing = await cli(app, ['delete', 'audit_1', '--yes'])
    expect(missing.code).toBe(1)
    expect(missing.stderr).toMatch(/ERR_WEBHOOK_NOT_FOUND/)

    for (const r of [created, listed, updated, added, again, tlist, removed, table, deleted, empty, missing]) {
      expect(r.stdout + r.stderr).not.toContain(password)
    }
  })

  it('a bad id, password, URL or trigger is refused with exit 2 naming the field, before any request reaches the sandbox', async () => {
    const app = await sb.app()
    const secret = testSecret('hookpassword') // has hyphens: not alphanumeric
    const cases: [string[], Record<string, string>, RegExp][] = [
      [['create', 'bad id', '--name', 'N', '--url', 'https://e.com'], {}, /<id> \(id\): must be alphanumeric/],
      [['create', 'i'.repeat(51), '--name', 'N', '--url', 'https://e.com'], {}, /<id> \(id\): must be at most 50/],
      [
        ['create', 'ok', '--name', 'N', '--url', 'https://e.com', '--basic-auth', '--username', 'u'],
        { CHATFERRY_WEBHOOK_PASSWORD: secret },
        /--password \(password\): must be alphanumeric/,
      ],
      [
        ['create', 'ok', '--name', 'N', '--url', 'https://e.com', '--basic-auth', '--username', 'u'],
        { CHATFERRY_WEBHOOK_PASSWORD: 'p'.repeat(101) },
        /--password \(password\): must be at most 100/,
      ],
      [['create', 'ok', '--name', 'N', '--url', 'http://example.com/hook'], {}, /--url \(webhookURL\): must use https/],
      [['create', 'ok', '--name', 'N', '--url', `https://e.com/${'p'.repeat(250)}`], {}, /--url \(webhookURL\): must be at most 255/],
      [['update', 'ok', '--url', 'ftp://e.com'], {}, /--url \(webhookURL\)/],
      [['update', 'ok', '--password', 'a b'], {}, /--password \(password\)/],
      [['delete', 'a-b', '--yes'], {}, /<id> \(id\)/],
      [['triggers', 'add', 'ok', 'message_exploded'], {}, /<triggers\.\.\.> \(triggerIds\): "message_exploded" is not a documented trigger id/],
    ]
    for (const [args, extra, expected] of cases) {
      const r = await cli(app, args, extra)
      expect(r.code, `${args.join(' ').slice(0, 60)}: ${r.stderr}`).toBe(2)
      expect(r.stderr).toMatch(expected)
      expect(r.stdout + r.stderr).not.toContain(secret)
      expect(r.stdout + r.stderr).not.toContain('p'.repeat(101))
    }
    await sb.sandbox.whenIdle()
    expect(await sb.sandbox.requests(app.id), 'no request reached the sandbox').toEqual([])
    // The log would have shown one: a good command is recorded.
    const good = await cli(app, ['create', 'ok', '--name', 'N', '--url', 'https://e.com'])
    expect(good.code, good.stderr).toBe(0)
    await sb.sandbox.whenIdle()
    expect((await sb.sandbox.requests(app.id)).map((r) => [r.method, r.path, r.status])).toEqual([['POST', `/apps/${app.id}/webhooks`, 200]])
  })

  it('--help shows examples and the rules', async () => {
    for (const args of [
      ['webhooks', '--help'],
      ['webhooks', 'create', '--help'],
      ['webhooks', 'triggers', 'add', '--help'],
    ]) {
      const r = await runCli(args).done
      expect(r.code).toBe(0)
      expect(r.stdout).toMatch(/Example/)
    }
    const top = await runCli(['webhooks', '--help']).done
    expect(top.stdout).toMatch(/at most 25 webhooks per app/)
  })
})
