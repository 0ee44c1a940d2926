/**
 * What one `chatferry fleet worker` costs while no tenant of its fleet has work (numbers, not
 * pass/fail): 50 tenants bound to 50 sandbox apps, nothing planned; the worker's CPU time and the
 * ledger database's transactions (pg_stat_database, every client of that database: the worker's
 * loaders, its look for work, pg-boss's upkeep of the tenants' queues) over 30 s, after 15 s to start.
 * That is a worker started before `fleet run` while it plans, or one serving a fleet whose tenants
 * are done (src/fleet/fleet-worker.ts starts a tenant's loader only when the tenant has work).
 *
 * `node test/bench/idle-fleet-worker-bench.ts [--tenants N]` (or `npm run bench -- idle-fleet-worker`).
 * Needs a Postgres server: $BENCH_DATABASE_URL or postgres://postgres@127.0.0.1:5432/postgres.
 */
import './bench-cli.ts'

import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'

import pg from 'pg'

import { keyVault } from '../../src/fleet/key-vault.ts'
import { startSandbox } from '../../src/sandbox/index.ts'
import { bindTenants, writeFleetFile } from '../helpers/fleet-fixtures.ts'
import { tenantSource, writeTenantLegacy } from '../helpers/fleet-legacy.ts'
import { BENCH_SERVER_URL, benchDatabases } from './bench-databases.ts'

const CLI = resolve(import.meta.dirname, '../../src/cli/main.ts')
const i = process.argv.indexOf('--tenants')
const TENANTS = i >= 0 ? Number(process.argv[i + 1]) : 50
const databases = benchDatabases(BENCH_SERVER_URL)
/** The process's user + system CPU time in seconds (/proc, clock ticks of 10 ms). */
const cpuSeconds = (pid: number) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
  return (Number(f[11]) + Number(f[12])) / 100
}
try {
  const dir = mkdtempSync(join(tmpdir(), 'cf-idle-'))
  const ledgerUrl = await databases.fresh('bench_idle_ledger')
  const sandbox = await startSandbox({ state: { url: await databases.fresh('bench_idle_sbx'), poolSize: 4 }, maxApps: TENANTS + 5 })
  const fleetKey = randomBytes(32)
  const apps = new Map<string, { id: string; apiKey: string }>()
  const tenants = []
  for (let n = 0; n < TENANTS; n++) {
    const id = `t${String(n).padStart(2, '0')}`
    apps.set(id, await sandbox.createApp({ id: `idle-${id}`, settings: { requestsPerMinute: 12, windowMs: 60_000 } }))
    const file = join(dir, `${id}.db`)
    writeTenantLegacy(file, id, { users: 1, groups: 1, membersPerGroup: 1, messages: 1 })
    tenants.push({ id, source: tenantSource(file, id) })
  }
  await bindTenants(ledgerUrl, 'idle', keyVault(fleetKey), apps)
  const fleetFile = writeFleetFile(join(dir, 'fleet.yaml'), {
    fleetId: 'idle',
    ledgerUrl,
    sandboxUrl: sandbox.url,
    tenants,
    perWindow: 12,
    windowMs: 60_000,
    load: { leaseSeconds: 60 },
    timeoutMs: 30_000,
  })
  const child = spawn(process.execPath, [CLI, 'fleet', 'worker', '--fleet', fleetFile], {
    env: { ...process.env, CHATFERRY_LOG_LEVEL: 'warn', CHATFERRY_FLEET_KEY: fleetKey.toString('base64') },
    stdio: 'ignore',
  })
  const db = new pg.Client({ connectionString: ledgerUrl })
  await db.connect()
  const xacts = async () =>
    Number((await db.query(`select xact_commit + xact_rollback as n from pg_stat_database where datname = current_database()`)).rows[0].n)
  await new Promise((r) => setTimeout(r, 15_000))
  const c0 = cpuSeconds(child.pid!),
    x0 = await xacts()
  await new Promise((r) => setTimeout(r, 30_000))
  const c1 = cpuSeconds(child.pid!),
    x1 = await xacts()
  process.stdout.write(
    `idle fleet worker, ${TENANTS} tenants without work, 30 s after a 15 s start: CPU ${(c1 - c0).toFixed(2)} s, ledger transactions ${x1 - x0} (${((x1 - x0) / 30).toFixed(0)}/s); start CPU ${c0.toFixed(2)} s\n`,
  )
  await db.end()
  child.kill('SIGTERM')
  await new Promise((r) => child.on('exit', r))
  await sandbox.close()
} finally {
  await databases.dropAll()
}
