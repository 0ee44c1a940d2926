/**
 * Issue 15 part 2, scheduled runs, through the CLI as a process on a real Postgres ledger, the
 * generic-sql fixture and the sandbox over HTTP: a cron expression that does not parse is exit 2
 * before any I/O; the embedded store is refused (exit 2); a second schedule for the job is refused
 * (exit 2 naming the first); a worker's pg-boss cron pass fires the schedule and, while a run of the
 * job is going, the trigger is skipped (logged, no second run); a trigger sent into the schedule's
 * queue through pg-boss's API (what its cron pass does once a minute) runs a delta through the
 * worker, which loads a person added to the source since the full read; `unschedule` stops the cron pass from sending more.
 */
import pg from 'pg'
import { PgBoss } from 'pg-boss'
import { describe, expect, it } from 'vitest'

import { scheduleQueueName } from '../../../src/job/job-schedule.ts'
import { BOSS_SCHEMA } from '../../../src/job/schedule-boss.ts'
import { hostKey } from '../../../src/load/host-key.ts'
import { openLedger } from '../../../src/state/store.ts'
import { genericSourceConfig, loadGenericSqlFixture, openGenericWriter } from '../../fixtures/generic-sql/fixture.ts'
import { ledgerRows, oneJsonObject, runsOf, useCliSuite } from '../../helpers/cli-suite.ts'
import { runCli } from '../../helpers/ledger-fixtures.ts'
import { writeRunConfig } from '../../helpers/run-e2e.ts'

const suite = useCliSuite()

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

async function setUp(prefix: string, embedded = false) {
  const source = await suite.freshDb(`${prefix}_src`)
  await loadGenericSqlFixture('postgres', source.url)
  const state = await suite.freshDb(`${prefix}_state`)
  const app = await suite.tsb.app({ requestsPerMinute: 6000 })
  const cfg = writeRunConfig({
    appId: app.id,
    apiKey: app.apiKey,
    baseUrl: app.baseUrl,
    ...(embedded ? {} : { stateUrl: state.url }),
    source: genericSourceConfig(source.url) as unknown as Record<string, unknown>,
  })
  return { cfg, state, app, source }
}

/** The ledger status of a user item by legacy id, undefined when not planned. */
async function itemStatus(stateUrl: string, jobId: string, legacyId: string): Promise<string | undefined> {
  const c = new pg.Client({ connectionString: stateUrl })
  await c.connect()
  try {
    const r = await c.query(`select status from chatferry.items where job_id = $1 and entity = 'users' and legacy_id = $2`, [jobId, legacyId])
    return (r.rows[0] as { status: string } | undefined)?.status
  } finally {
    await c.end()
  }
}

describe('schedule: refused before anything starts', () => {
  it('a cron expression that does not parse: exit 2 naming it, the ledger untouched; the embedded store: exit 2 saying why', async () => {
    const { cfg, state } = await setUp('cf_sched_bad')
    for (const cron of ['61 * * * *', '* * * *', 'every 15 minutes']) {
      const r = await runCli(['schedule', '--cron', cron, '--delta', '--config', cfg, '--json']).done
      expect(r.code, r.stderr).toBe(2)
      expect(r.stderr).toContain(`--cron: "${cron}"`)
      expect(oneJsonObject(r.stdout)).toMatchObject({ command: 'schedule', exitCode: 2, status: 'usage-error' })
    }
    expect(await ledgerRows(state.url)).toEqual({ jobs: 0, runs: 0, items: 0, cursors: 0 })

    const embedded = await setUp('cf_sched_emb', true)
    for (const args of [['schedule', '--cron', '*/15 * * * *', '--delta'], ['unschedule'], ['schedules']]) {
      const r = await runCli([...args, '--config', embedded.cfg]).done
      expect(r.code, `${args[0]}: ${r.stderr}`).toBe(2)
      expect(r.stderr).toMatch(/schedules need a shared Postgres ledger: set state\.url/)
    }
  }, 60_000)
})

describe('a schedule executed by a worker', () => {
  it('fires through pg-boss, is skipped while a run is going, runs a delta, is refused twice, and unschedule stops it', async () => {
    const { cfg, state, app, source } = await setUp('cf_sched')
    const full = await runCli(['run', '--config', cfg]).done
    // The fixture has rows the platform rejects on purpose: the full read completes either way.
    expect([0, 3], full.stderr).toContain(full.code)
    const jobId = app.id

    // Every second (six fields): pg-boss sends one trigger per minute slot, the first one on the worker's first cron pass.
    const saved = await runCli(['schedule', '--cron', '* * * * * *', '--delta', '--config', cfg, '--json']).done
    expect(saved.code, saved.stderr).toBe(0)
    expect(oneJsonObject(saved.stdout)).toMatchObject({
      command: 'schedule',
      exitCode: 0,
      jobId,
      schedule: { jobId, cron: '* * * * * *', mode: 'delta', timezone: 'UTC' },
      replaced: null,
    })
    const again = await runCli(['schedule', '--cron', '*/15 * * * *', '--delta', '--config', cfg]).done
    expect(again.code, again.stderr).toBe(2)
    expect(again.stderr).toMatch(new RegExp(`job ${jobId} already has a schedule: run --delta on "\\* \\* \\* \\* \\* \\*".*--replace`))
    const listed = await runCli(['schedules', '--config', cfg, '--json']).done
    expect(listed.code, listed.stderr).toBe(0)
    expect((oneJsonObject(listed.stdout).schedules as unknown[]).length).toBe(1)

    // A run of the job is going (its row in the run registry, alive: owned by this live process, heartbeat fresh).
    const store = await openLedger({ url: state.url })
    const going = await store.startRun(jobId, 'delta', `${hostKey()}/${process.pid}/test-run`)
    const beat = setInterval(() => void store.heartbeatRun(going).catch(() => {}), 1000)
    const runsBefore = (await runsOf(state.url, jobId)).length

    const worker = runCli(['worker', '--config', cfg])
    try {
      await worker.waitFor(new RegExp(`scheduled delta skipped: run ${going} \\(delta, [^)]*\\) of job ${jobId} is going`), 45_000)
      const during = await runsOf(state.url, jobId)
      expect(during.filter((r) => r.mode === 'delta' && r.id !== going)).toEqual([])
      clearInterval(beat)
      await store.finishRun(going, 'succeeded')
      expect(during.length).toBe(runsBefore + 1) // only the worker's own run row

      // A person added to the source since the full read: the scheduled delta must carry it.
      const writer = await openGenericWriter('postgres', source.url)
      const nowS = Math.floor(Date.now() / 1000)
      await writer.insert('people', [{ pid: 99, full_name: 'Late Joiner', handle: 'p99', robot: false, joined_s: nowS, modified_s: nowS }])
      await writer.close()
      expect(await itemStatus(state.url, jobId, '99')).toBeUndefined()

      // The next minute's trigger, sent now into the schedule's queue the way pg-boss's cron pass forwards one.
      const boss = new PgBoss({ connectionString: state.url, schema: BOSS_SCHEMA, supervise: false, schedule: false, migrate: false })
      boss.on('error', () => {})
      await boss.start()
      await boss.send(scheduleQueueName(jobId), { jobId, mode: 'delta' })
      await worker.waitFor(new RegExp(`scheduled delta of job ${jobId} ended with exit [03]`), 60_000)
      // When a new minute slot began since the skipped trigger, the cron pass sent its trigger too
      // (the schedule is still on): its delta is as legitimate, and may be the one that just ended,
      // so the late joiner may come with the next one.
      const loadedBy = Date.now() + 60_000
      while ((await itemStatus(state.url, jobId, '99')) !== 'done' && Date.now() < loadedBy) {
        await sleep(500)
      }
      expect(await itemStatus(state.url, jobId, '99')).toBe('done')
      const deltas = (await runsOf(state.url, jobId)).filter((r) => r.mode === 'delta' && r.id !== going)
      expect(deltas.length).toBeGreaterThanOrEqual(1)
      expect(['succeeded', 'rejected']).toContain(deltas[0]?.status)

      const removed = await runCli(['unschedule', '--config', cfg, '--json']).done
      expect(removed.code, removed.stderr).toBe(0)
      expect(oneJsonObject(removed.stdout)).toMatchObject({ command: 'unschedule', exitCode: 0, jobId, removed: { cron: '* * * * * *' } })
      const none = await runCli(['schedules', '--config', cfg, '--json']).done
      expect(oneJsonObject(none.stdout)).toMatchObject({ schedules: [] })
      // Past the next minute slot (in which `* * * * * *` would be due again) and a cron pass (every 5 s): no trigger came.
      // The baseline is taken once every trigger sent before `unschedule` has been handled, and its
      // delta (if any) has ended: those were due while the schedule was on.
      const jobs = () => boss.findJobs(scheduleQueueName(jobId))
      const deltaRuns = async () => (await runsOf(state.url, jobId)).filter((r) => r.mode === 'delta' && r.id !== going)
      const settleUntil = Date.now() + 60_000
      while (
        ((await jobs()).some((j) => j.state === 'created' || j.state === 'retry' || j.state === 'active') ||
          (await deltaRuns()).some((r) => r.status === 'running')) &&
        Date.now() < settleUntil
      ) {
        await sleep(500)
      }
      const jobsAfterUnschedule = (await jobs()).length
      const deltasAfterUnschedule = (await deltaRuns()).length
      await sleep(60_000 - (Date.now() % 60_000) + 8000)
      expect((await jobs()).length).toBe(jobsAfterUnschedule)
      expect(await deltaRuns()).toHaveLength(deltasAfterUnschedule)
      await boss.stop({ graceful: false, close: true })
    } finally {
      clearInterval(beat)
      await store.close()
      worker.child.kill('SIGTERM')
    }
    const stopped = await worker.done
    expect(stopped.code, stopped.stderr).toBe(0)
  }, 180_000)
  it("purge removes the job's schedule with its queue", async () => {
    const { cfg, app } = await setUp('cf_sched_purge')
    const full = await runCli(['run', '--config', cfg]).done
    expect([0, 3], full.stderr).toContain(full.code)
    const saved = await runCli(['schedule', '--cron', '*/15 * * * *', '--delta', '--config', cfg]).done
    expect(saved.code, saved.stderr).toBe(0)
    const purged = await runCli(['purge', '--job', app.id, '--yes', '--json', '--config', cfg]).done
    expect(purged.code, purged.stderr).toBe(0)
    expect(oneJsonObject(purged.stdout)).toMatchObject({ jobId: app.id, schedule: scheduleQueueName(app.id) })
    const after = await runCli(['schedules', '--config', cfg, '--json']).done
    expect(after.stdout + after.stderr).not.toContain('*/15 * * * *')
  }, 120_000)
})
