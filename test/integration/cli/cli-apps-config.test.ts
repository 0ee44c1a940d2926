/**
 * `chatferry apps` and `chatferry config check` as a user runs them: the CLI as a process, the
 * management interface of a sandbox over HTTP.
 */
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { runCli } from '../../helpers/ledger-fixtures.ts'
import { MGMT, startTestSandbox, type TestSandbox } from '../../helpers/sandbox.ts'
import { testSecret } from '../../helpers/secrets.ts'

let sb: TestSandbox
beforeAll(async () => {
  sb = await startTestSandbox()
})
afterAll(async () => {
  await sb.close()
})

describe('chatferry apps', () => {
  it('creates, lists and deletes an app with credentials from the environment; the created key works', async () => {
    const env = { CHATFERRY_MGMT_URL: sb.sandbox.url, CHATFERRY_MGMT_KEY: MGMT.key, CHATFERRY_MGMT_SECRET: MGMT.secret }
    const created = await runCli(['apps', 'create', '--name', 'Acme chat', '--region', 'eu', '--json'], env).done
    expect(created.code, created.stderr).toBe(0)
    const app = JSON.parse(created.stdout) as { appId: string; region: string; apiKey: string }
    expect(app.region).toBe('eu')
    expect(app.apiKey).toMatch(/^[0-9a-f]{40}$/)
    // The returned key is the fullAccess REST key: it may import.
    const res = await fetch(`${sb.sandbox.url}/apps/${app.appId}/v3/data_import/users`, {
      method: 'POST',
      headers: { apikey: app.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ users: { alice: { uid: 'alice', name: 'Alice' } } }),
    })
    expect(res.status).toBe(200)

    const listed = await runCli(['apps', 'list', '--json'], env).done
    expect(listed.code, listed.stderr).toBe(0)
    expect((JSON.parse(listed.stdout) as { id: string }[]).map((a) => a.id)).toContain(app.appId)

    const refused = await runCli(['apps', 'delete', app.appId], env).done
    expect(refused.code, 'delete without --yes is a usage error').toBe(2)
    const deleted = await runCli(['apps', 'delete', app.appId, '--yes'], env).done
    expect(deleted.code, deleted.stderr).toBe(0)
    expect(deleted.stdout).toContain(`app ${app.appId} scheduled for deletion`)
    const after = await runCli(['apps', 'list', '--json'], env).done
    expect((JSON.parse(after.stdout) as { id: string }[]).map((a) => a.id)).not.toContain(app.appId)
  })

  it('wrong management credentials exit 1 naming the platform code, never echoing the secret', async () => {
    const r = await runCli(['apps', 'list'], {
      CHATFERRY_MGMT_URL: sb.sandbox.url,
      CHATFERRY_MGMT_KEY: MGMT.key,
      CHATFERRY_MGMT_SECRET: 'wrong-secret-value',
    }).done
    expect(r.code).toBe(1)
    expect(r.stderr).toMatch(/management\.listApps failed \(HTTP 401\): AUTH_ERR_APIKEY_NOT_FOUND/)
    expect(r.stderr).not.toContain('wrong-secret-value')
  })

  it('a key without a secret, or a plain-http remote URL, is a usage error before any request', async () => {
    const r = await runCli(['apps', 'list', '--mgmt-key', 'k', '--mgmt-url', 'http://mgmt.example.com'], { CHATFERRY_MGMT_SECRET: '' }).done
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/--mgmt-secret: is required/)
    expect(r.stderr).toMatch(/--mgmt-url: plain http:\/\/ is only allowed for loopback/)
  })
})

describe('chatferry config check', () => {
  const dir = mkdtempSync(join(tmpdir(), 'chatferry-config-'))

  it('prints the resolved configuration with every secret hidden', async () => {
    const [API_KEY, MGMT_SECRET] = [testSecret('apikey'), testSecret('mgmtsecret')]
    const file = join(dir, 'ok.yaml')
    writeFileSync(
      file,
      [
        'target: { appId: acme, region: eu, apiKey: "${TEST_API_KEY}" }',
        'management: { key: mkey-value, secret: "${TEST_MGMT_SECRET}" }',
        'state: { url: "postgres://ledger:ledger-password@db.internal/chatferry" }',
        'source: { connector: generic-sql, url: "postgres://reader:source-password@legacy.internal/chat", entities: { users: { query: "SELECT id, name FROM people" } } }',
      ].join('\n'),
    )
    const r = await runCli(['config', 'check', '-c', file], { TEST_API_KEY: API_KEY, TEST_MGMT_SECRET: MGMT_SECRET }).done
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toContain('valid')
    expect(r.stdout).toContain('https://acme.api-eu.cometchat.io/v3')
    for (const secret of [API_KEY, 'mkey-value', MGMT_SECRET, 'ledger-password', 'source-password']) {
      expect(r.stdout, secret).not.toContain(secret)
    }
  })

  it('lists every problem of a broken file with its path and exits 2', async () => {
    const file = join(dir, 'bad.yaml')
    writeFileSync(file, 'target: { appId: "bad id", region: mars }\nload: { concurrency: 0 }\nextra: 1\n')
    const r = await runCli(['config', 'check', '-c', file]).done
    expect(r.code).toBe(2)
    for (const path of ['target.appId', 'target.region', 'target.apiKey', 'load.concurrency']) {
      expect(r.stderr).toContain(`- ${path}:`)
    }
    expect(r.stderr).toMatch(/unknown key: extra/)
  })

  // A syntax error two lines above a literal source password and API key: the problem names
  // file:line:column and the key path, for `config check` and for `run` alike, and repeats neither.
  it.each([['config', 'check'], ['run']])('a YAML syntax error next to secrets: `%s` names where, never the text', async (...command) => {
    const apiKey = testSecret('apikey')
    const password = testSecret('dbpassword')
    const file = join(dir, `syntax-${command[0]}.yaml`)
    writeFileSync(
      file,
      [
        'target:',
        '  appId: acme',
        '  region: eu',
        `  apiKey: "${apiKey}`,
        'source:',
        '  connector: mattermost',
        `  url: postgres://mm:${password}@db.internal/mm`,
        '',
      ].join('\n'),
    )
    const r = await runCli([...command, '-c', file]).done
    expect(r.code).toBe(2)
    expect(r.stderr).toContain(`- target.apiKey: YAML syntax error at ${file}:8:1: Missing closing "quote`)
    expect(r.stdout + r.stderr).not.toContain(apiKey)
    expect(r.stdout + r.stderr).not.toContain(password)
  })

  it('refuses a lease shorter than a request exactly as run does, naming both fields; with more problems, lists them all', async () => {
    const file = join(dir, 'lease.yaml')
    writeFileSync(file, `target: { appId: acme, region: eu, apiKey: "${testSecret('apikey')}", timeoutMs: 30000 }\nload: { leaseSeconds: 10 }\n`)
    for (const command of [['config', 'check'], ['run']]) {
      const r = await runCli([...command, '-c', file]).done
      expect(r.code, command.join(' ')).toBe(2)
      expect(r.stderr).toMatch(/- load\.leaseSeconds: 10 s must exceed target\.timeoutMs \(30000 ms\)/)
    }
    const several = join(dir, 'lease-and-more.yaml')
    writeFileSync(several, 'target: { appId: acme, region: mars, timeoutMs: 30000 }\nload: { leaseSeconds: 10, concurrency: 0 }\n')
    const r = await runCli(['config', 'check', '-c', several]).done
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/4 problems in the configuration/)
    for (const path of ['target.region', 'target.apiKey', 'load.concurrency', 'load.leaseSeconds']) {
      expect(r.stderr).toContain(`- ${path}:`)
    }
  })

  it('a missing file exits 2 and says how to pass one', async () => {
    const r = await runCli(['config', 'check', '-c', join(dir, 'nope.yaml')]).done
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/file not found \(pass --config FILE\)/)
  })
})
