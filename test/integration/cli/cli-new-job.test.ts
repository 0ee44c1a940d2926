/**
 * Issue 28, item 4: jobs are never created by accident. Through the CLI as a process on a real
 * Postgres ledger, a SQLite in-house source and the sandbox: while the ledger holds a job, `run`
 * and `plan` with a job id it does not hold exit 2 naming the jobs it holds (and the closest one)
 * before anything is read or sent (the sandbox's request log stays empty); `--new-job` starts it;
 * a `run --new-job` that fails leaves no job, run or report behind.
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import pg from 'pg'
import { beforeAll, describe, expect, it } from 'vitest'

import { genericSourceConfig, loadGenericSqlFixture } from '../../fixtures/generic-sql/fixture.ts'
import { useCliSuite } from '../../helpers/cli-suite.ts'
import { runCli } from '../../helpers/ledger-fixtures.ts'
import { writeRunConfig } from '../../helpers/run-e2e.ts'

const suite = useCliSuite()

/** The ledger's job ids, and how many runs and reports each holds. */
async function jobsOf(url: string): Promise<Record<string, { runs: number; reports: number }>> {
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  try {
    const r = await c.query<{ id: string; runs: number; reports: number }>(
      `select j.id, (select count(*)::int from chatferry.runs r where r.job_id = j.id) as runs,
              (select count(*)::int from chatferry.reports p where p.job_id = j.id) as reports
         from chatferry.jobs j order by j.id`,
    )
    const orphanReports = await c.query<{ job_id: string }>(
      `select distinct job_id from chatferry.reports where job_id not in (select id from chatferry.jobs)`,
    )
    return Object.fromEntries([
      ...r.rows.map((row) => [row.id, { runs: row.runs, reports: row.reports }] as const),
      ...orphanReports.rows.map((row) => [`report-only:${row.job_id}`, { runs: 0, reports: -1 }] as const),
    ])
  } finally {
    await c.end()
  }
}

describe('a job the ledger does not hold, while it holds another', () => {
  let cfg: string
  let stateUrl: string
  let appId: string
  /** The run rows (one per run: src/job/job-run.ts) and reports of the ledger's first job. */
  let firstRun: { runs: number; reports: number }

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cf-newjob-'))
    const sourceUrl = `sqlite:${join(dir, 'legacy.db')}`
    await loadGenericSqlFixture('sqlite', sourceUrl)
    stateUrl = (await suite.freshDb('cf_newjob')).url
    const app = await suite.tsb.app({ retentionDays: 100_000, requestsPerMinute: 6000, windowMs: 10_000 })
    appId = app.id
    cfg = writeRunConfig({
      appId: app.id,
      apiKey: app.apiKey,
      baseUrl: app.baseUrl,
      stateUrl,
      source: { ...genericSourceConfig(sourceUrl) } as unknown as Record<string, unknown>,
      policies: { retention: { oldMessages: 'send' } },
      load: { quotaWindowMs: 10_000 },
      dir,
    })
    // The first run of the ledger needs no flag: it holds no job yet. The fixture has bad rows (exit 3).
    const first = await runCli(['run', '--config', cfg, '--job', 'acme-chat']).done
    expect(first.code, first.stderr).toBe(3)
    firstRun = (await jobsOf(stateUrl))['acme-chat']!
    // One run, one row: its loader writes none of its own.
    expect(firstRun.runs).toBe(1)
  }, 120_000)

  it('run --job with a typo: exit 2 naming the jobs held and the closest, nothing read, sent or recorded', async () => {
    await suite.tsb.sandbox.whenIdle()
    const before = (await suite.tsb.sandbox.requests(appId)).length
    const r = await runCli(['run', '--config', cfg, '--job', 'acme-caht', '--json']).done
    expect(r.code, r.stderr).toBe(2)
    expect(r.stderr).toMatch(
      /job acme-caht is not in postgres:\/\/\S+, which holds job acme-chat \(did you mean acme-chat\?\); a new job reads and sends the whole history again, .*to continue a job, pass its id \(--job acme-chat\); to start job acme-caht, add --new-job/,
    )
    expect(JSON.parse(r.stdout)).toMatchObject({ command: 'run', exitCode: 2, jobId: 'acme-caht', runId: null })
    await suite.tsb.sandbox.whenIdle()
    expect((await suite.tsb.sandbox.requests(appId)).length).toBe(before)
    expect(Object.keys(await jobsOf(stateUrl))).toEqual(['acme-chat'])

    // The same through CHATFERRY_JOB_ID, a scheduler's usual way.
    const env = await runCli(['run', '--delta', '--config', cfg], { CHATFERRY_JOB_ID: 'acme' }).done
    expect(env.code, env.stderr).toBe(2)
    expect(env.stderr).toMatch(/job acme is not in .*, which holds job acme-chat/)
    expect(Object.keys(await jobsOf(stateUrl))).toEqual(['acme-chat'])
  }, 60_000)

  it('plan --job with a typo: exit 2 before the source is read, no report kept', async () => {
    const out = mkdtempSync(join(tmpdir(), 'cf-newjob-plan-'))
    const r = await runCli(['plan', '--config', cfg, '--job', 'acme-chta', '--out', out]).done
    expect(r.code, r.stderr).toBe(2)
    expect(r.stderr).toMatch(/job acme-chta is not in .*which holds job acme-chat \(did you mean acme-chat\?\).*add --new-job/)
    expect(await jobsOf(stateUrl)).toEqual({ 'acme-chat': firstRun })
  })

  it('a failed run --new-job (a delta before any full read) leaves no job, run or report behind', async () => {
    const r = await runCli(['run', '--delta', '--new-job', '--config', cfg, '--job', 'fresh']).done
    expect(r.code, r.stderr).toBe(2)
    expect(r.stderr).toMatch(/a delta run needs a completed full read/)
    expect(Object.keys(await jobsOf(stateUrl))).toEqual(['acme-chat'])
  }, 60_000)

  it('--new-job starts the job: plan reports on it, run loads it, and then it needs no flag', async () => {
    const out = mkdtempSync(join(tmpdir(), 'cf-newjob-plan-'))
    const plan = await runCli(['plan', '--new-job', '--config', cfg, '--job', 'second', '--out', out]).done
    expect(plan.code, plan.stderr).toBe(0)
    const run = await runCli(['run', '--new-job', '--config', cfg, '--job', 'second']).done
    expect(run.code, run.stderr).toBe(3)
    const again = await runCli(['run', '--config', cfg, '--job', 'second']).done
    expect(again.code, again.stderr).toBe(3)
    expect(await jobsOf(stateUrl)).toEqual({ 'acme-chat': firstRun, second: { runs: firstRun.runs * 2, reports: 1 } })
  }, 120_000)
})
