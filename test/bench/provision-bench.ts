/**
 * Provisioning benchmark (numbers, and the two checks the README states): 200 tenants provisioned
 * by one `chatferry fleet provision` process against a sandbox (real Postgres) whose management
 * interface answers 10% of its calls with 429 (the management fault setting, seeded; the wait only
 * in the text). From the sandbox's account-wide management call log:
 * - **management calls ÷ minimal**: every call the sandbox received (429s included) ÷ the fewest a
 *   pass can make (the credentials check, then per tenant: the look-up by name, the create, the
 *   extensions, the team) — target ≤ 1.2;
 * - **every tenant provisioned once**: one successful create per tenant, one app per tenant name,
 *   every binding `provisioned`;
 * - the 429s, the wall time, and the pace (`management.requestsPerMinute`).
 *
 * `node test/bench/provision-bench.ts [--tenants N] [--rate429 P] [--rpm R] [--wait S]` (or `npm run
 * bench -- provision …`). Needs a Postgres server: $BENCH_DATABASE_URL or the local one.
 */
import './bench-cli.ts'

import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'

import pg from 'pg'
import { stringify } from 'yaml'

import { startSandbox } from '../../src/sandbox/index.ts'
import { BENCH_SERVER_URL, benchDatabases } from './bench-databases.ts'

const CLI = resolve(import.meta.dirname, '../../src/cli/main.ts')
const arg = (name: string) => {
  const i = process.argv.indexOf(name)
  return i >= 0 ? process.argv[i + 1] : undefined
}
const TENANTS = Number(arg('--tenants') ?? 200)
const RATE_429 = Number(arg('--rate429') ?? 0.1)
const RPM = Number(arg('--rpm') ?? 1200)
const WAIT_S = Number(arg('--wait') ?? 0.5)
/** Calls one tenant needs at least: the look-up by name, the create, the extensions, the team. */
const PER_TENANT = 4
const MGMT = { key: 'bench-mgmt-key', secret: `bench-${randomBytes(8).toString('hex')}` }

const databases = benchDatabases(BENCH_SERVER_URL)

function provision(file: string, env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, [CLI, 'fleet', 'provision', '--fleet', file, '--json'], {
    env: { ...process.env, CHATFERRY_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout.on('data', (d: Buffer) => (output += d.toString()))
  child.stderr.on('data', (d: Buffer) => (output += d.toString()))
  return new Promise((res) => child.on('exit', (code) => res({ code, output })))
}

async function bindingStates(ledgerUrl: string, fleetId: string): Promise<Map<string, number>> {
  const c = new pg.Client({ connectionString: ledgerUrl })
  await c.connect()
  try {
    const r = await c.query<{ state: string; n: number }>(
      'select state, count(*)::int as n from chatferry.fleet_tenants where fleet_id = $1 group by 1',
      [fleetId],
    )
    return new Map(r.rows.map((row) => [row.state, row.n]))
  } finally {
    await c.end()
  }
}

async function main(): Promise<void> {
  const sandboxUrl = await databases.fresh('bench_prov_sbx')
  const ledgerUrl = await databases.fresh('bench_prov_ledger')
  const sandbox = await startSandbox({
    state: { url: sandboxUrl, poolSize: 10 },
    management: MGMT,
    maxApps: TENANTS + 5,
    managementFaults: { rate429: RATE_429, retryAfterSeconds: WAIT_S, seed: 429 },
  })
  try {
    const dir = mkdtempSync(join(tmpdir(), 'cf-bench-prov-'))
    const fleetId = `prov${randomBytes(2).toString('hex')}`
    const file = join(dir, 'fleet.yaml')
    writeFileSync(
      file,
      stringify({
        fleet: { id: fleetId },
        state: { url: ledgerUrl },
        management: { url: sandbox.url, key: '${CF_MGMT_KEY}', secret: '${CF_MGMT_SECRET}', requestsPerMinute: RPM },
        sources: {
          shared: {
            connector: 'generic-sql',
            url: `sqlite:${join(dir, 'shared.db')}`,
            tenantColumn: 'org',
            entities: { users: { query: 'SELECT id, name, org FROM people' } },
          },
        },
        defaults: {
          region: 'us',
          target: { baseUrl: `${sandbox.url}/apps/{appId}/v3` },
          app: { extensions: ['polls'], team: { admins: ['ops@vendor.example'] } },
        },
        tenants: Array.from({ length: TENANTS }, (_, i) => ({
          id: `t${i}`,
          name: `${fleetId} tenant ${i}`,
          source: { template: 'shared', tenantValue: `t${i}` },
        })),
      }),
    )
    const env = { CHATFERRY_FLEET_KEY: randomBytes(32).toString('base64'), CF_MGMT_KEY: MGMT.key, CF_MGMT_SECRET: MGMT.secret }
    const started = Date.now()
    const r = await provision(file, env)
    const seconds = (Date.now() - started) / 1000
    const calls = sandbox.management.calls()
    const minimal = 1 + PER_TENANT * TENANTS
    const creates = calls.filter((c) => c.method === 'POST' && c.path === '/apps' && c.status === 200).length
    const apps = await sandbox.store.selectFrom('apps').select('name').where('name', 'like', `${fleetId} %`).execute()
    const states = await bindingStates(ledgerUrl, fleetId)
    const ratio = calls.length / minimal
    const once = creates === TENANTS && new Set(apps.map((a) => a.name)).size === TENANTS && apps.length === TENANTS
    const provisioned = states.get('provisioned') ?? 0
    process.stdout.write(
      [
        `fleet provision: ${TENANTS} tenants, ${(RATE_429 * 100).toFixed(0)}% management 429s (wait ${WAIT_S} s), pace ${RPM}/min: exit ${r.code} in ${seconds.toFixed(1)} s`,
        `management calls: ${calls.length} (${calls.filter((c) => c.status === 429).length} answered 429, ${calls.filter((c) => c.status !== 200 && c.status !== 429).length} other failures); minimal ${minimal}; calls ÷ minimal ${ratio.toFixed(3)} (target ≤ 1.2: ${ratio <= 1.2 ? 'met' : 'NOT met'})`,
        `provisioned once: ${creates} creates, ${apps.length} apps of the fleet's names, ${provisioned} bindings provisioned (${once && provisioned === TENANTS ? 'every tenant, once' : 'NOT every tenant once'})`,
      ].join('\n') + '\n',
    )
    if (r.code !== 0) {
      process.stdout.write(`${r.output.slice(-3000)}\n`)
    }
    if (r.code !== 0 || ratio > 1.2 || !once || provisioned !== TENANTS) {
      process.exitCode = 1
    }
  } finally {
    await sandbox.close()
    await databases.dropAll()
  }
}

await main()
