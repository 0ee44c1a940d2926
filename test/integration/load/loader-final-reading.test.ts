/**
 * A load reads the job's counts once as it finishes, and the end of the run uses that reading: the
 * progress's last drawing and the run row's stats do not scan the job's items again (each such scan
 * takes seconds on a job of millions of items). The ledger is real (Postgres); its `entityStats`
 * calls are counted, with where each came from.
 */
import { pino } from 'pino'
import { expect, it } from 'vitest'

import { openCommandContext } from '../../../src/cli/open-command-context.ts'
import { runLoaderWithOutcome } from '../../../src/cli/run-loader-command.ts'
import type { LedgerContext } from '../../../src/job/ledger-context.ts'
import type { LedgerStore } from '../../../src/state/store.ts'
import { messages, users, writeConfig } from '../../helpers/ledger-fixtures.ts'
import { useLoaderFixture } from '../../helpers/loader-harness.ts'

const fx = useLoaderFixture('cf_final_reading')

/** The context with its store's `entityStats` calls recorded (the stack of each). */
function counting(ctx: LedgerContext): { ctx: LedgerContext; calls: string[] } {
  const calls: string[] = []
  const store = new Proxy(ctx.store, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver) as unknown
      if (key === 'entityStats' && typeof value === 'function') {
        return (jobId: string) => {
          calls.push(new Error('entityStats').stack ?? '')
          return (value as LedgerStore['entityStats']).call(target, jobId)
        }
      }
      return value
    },
  })
  return { ctx: { ...ctx, store, close: () => ctx.close() }, calls }
}

it('the run row, the progress and the exit use the counts the loader read as it finished', async () => {
  const app = await fx.sb.createApp({ id: 'final-reading', settings: { requestsPerMinute: 6000 } })
  const cfg = writeConfig({ appId: app.id, apiKey: app.apiKey, baseUrl: app.baseUrl, stateUrl: fx.tdb.url, requestsPerMinute: 6000 })
  await fx.store.ensureJob('final-reading', app.id)
  await fx.store.planItems('final-reading', 'users', users(3))
  await fx.store.planItems('final-reading', 'messages', messages(120, 3))

  const opened = await openCommandContext({ config: cfg, job: 'final-reading' })
  const { ctx, calls } = counting(opened)
  try {
    const { code, outcome, runId } = await runLoaderWithOutcome(ctx, 'load', pino({ level: 'silent' }))
    expect(code).toBe(0)
    expect(outcome.stats.find((s) => s.entity === 'messages')).toMatchObject({ done: 120 })
    // The last reading is the loader's own, as it finished; none after it.
    // One reading as the loader finished; the end of the run (its row) and the progress's last
    // drawing read none of their own (a drawing during the run is paced by what a reading costs).
    const caller = (c: string) => c.split('\n')[2] ?? ''
    expect(calls.filter((c) => /^\s+at LoaderRun\.finish /.test(caller(c)))).toHaveLength(1)
    expect(calls.filter((c) => /\bat (async )?end \(.*job-run\.ts/.test(c) || /\bat (async )?Object\.stop \(.*progress-drawer\.ts/.test(c))).toEqual(
      [],
    )
    // The run row holds those counts.
    const run = (await ctx.store.listRuns('final-reading')).find((r) => r.id === runId)
    expect(JSON.stringify(run?.stats)).toContain('"done":120')
  } finally {
    await ctx.close()
  }
})
