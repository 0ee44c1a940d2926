/**
 * Issue 15 part 2, the overlap rule across processes: two `chatferry worker` processes serve one
 * job's schedule, and three triggers are sent into its queue at once (what two cron passes and a
 * late one could do). Each trigger runs at most one delta at a time across both workers: the delta
 * runs of the job, read from the ledger, never overlap in time, and no trigger started a second run
 * while one was going.
 */
import pg from 'pg'
import { PgBoss } from 'pg-boss'
import { expect, it } from 'vitest'

import { scheduleQueueName } from '../../../src/job/job-schedule.ts'
import { BOSS_SCHEMA } from '../../../src/job/schedule-boss.ts'
import { genericSourceConfig, loadGenericSqlFixture } from '../../fixtures/generic-sql/fixture.ts'
import { useCliSuite } from '../../helpers/cli-suite.ts'
import { runCli } from '../../helpers/ledger-fixtures.ts'
import { writeRunConfig } from '../../helpers/run-e2e.ts'

const suite = useCliSuite()

async function deltaRuns(stateUrl: string, jobId: string): Promise<{ id: number; started: Date; finished: Date | null; owner: string }[]> {
  const c = new pg.Client({ connectionString: stateUrl })
  await c.connect()
  try {
    const r = await c.query(
      `select id::int as id, started_at as started, finished_at as finished, owner from chatferry.runs where job_id = $1 and mode = 'delta' order by id`,
      [jobId],
    )
    return r.rows as { id: number; started: Date; finished: Date | null; owner: string }[]
  } finally {
    await c.end()
  }
}

it('two workers, three triggers at once: the job’s deltas run one after another, never two at a time', async () => {
  const source = await suite.freshDb('cf_sched2_src')
  await loadGenericSqlFixture('postgres', source.url)
  const state = await suite.freshDb('cf_sched2_state')
  const app = await suite.tsb.app({ requestsPerMinute: 6000 })
  const cfg = writeRunConfig({
    appId: app.id,
    apiKey: app.apiKey,
    baseUrl: app.baseUrl,
    stateUrl: state.url,
    source: genericSourceConfig(source.url) as unknown as Record<string, unknown>,
  })
  const full = await runCli(['run', '--config', cfg]).done
  expect([0, 3], full.stderr).toContain(full.code)
  const jobId = app.id
  // A schedule that never comes due in the test (pg-boss's cron pass would add its own trigger otherwise).
  const saved = await runCli(['schedule', '--cron', '0 0 1 1 *', '--delta', '--config', cfg]).done
  expect(saved.code, saved.stderr).toBe(0)

  const workers = [runCli(['worker', '--config', cfg]), runCli(['worker', '--config', cfg])]
  const boss = new PgBoss({ connectionString: state.url, schema: BOSS_SCHEMA, supervise: false, schedule: false, migrate: false })
  boss.on('error', () => {})
  try {
    // Both workers serve the job's queues before the triggers come (they log nothing when idle: give them time to start).
    await new Promise((r) => setTimeout(r, 20_000))
    for (const w of workers) {
      expect(w.child.exitCode).toBeNull()
    }
    await boss.start()
    await Promise.all([1, 2, 3].map(() => boss.send(scheduleQueueName(jobId), { jobId, mode: 'delta' })))
    // Wait until no trigger is left in the queue and every delta started has finished.
    const until = Date.now() + 150_000
    for (;;) {
      const open = (await boss.findJobs(scheduleQueueName(jobId))).filter((j) => ['created', 'active', 'retry'].includes(j.state))
      const runs = await deltaRuns(state.url, jobId)
      if (open.length === 0 && runs.length > 0 && runs.every((r) => r.finished !== null)) {
        break
      }
      if (Date.now() > until) {
        throw new Error(`triggers still open: ${open.length}; delta runs: ${JSON.stringify(runs)}`)
      }
      await new Promise((r) => setTimeout(r, 1000))
    }
    const runs = await deltaRuns(state.url, jobId)
    expect(runs.length).toBeGreaterThanOrEqual(1)
    expect(runs.length).toBeLessThanOrEqual(3)
    // Never two at a time: each run starts after the one before it finished.
    for (let i = 1; i < runs.length; i++) {
      expect(runs[i]?.started.getTime()).toBeGreaterThanOrEqual((runs[i - 1]?.finished as Date).getTime())
    }
  } finally {
    await boss.stop({ graceful: false, close: true }).catch(() => {})
    for (const w of workers) {
      w.child.kill('SIGTERM')
    }
  }
  for (const w of workers) {
    const r = await w.done
    expect(r.code, r.stderr.slice(-2000)).toBe(0)
  }
}, 240_000)
