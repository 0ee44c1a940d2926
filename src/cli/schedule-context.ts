/**
 * What `schedule`, `unschedule` and `schedules` share: the ledger must be on a Postgres server
 * (`state.url`; refused with exit 2 on the embedded store, before it is opened), then the ledger
 * context and pg-boss on it for the job's schedule (src/job/job-schedule.ts).
 */
import type { PgBoss } from 'pg-boss'

import { openScheduler } from '../job/job-schedule.ts'
import type { LedgerContext } from '../job/ledger-context.ts'
import { loadConfig } from './load-config.ts'
import { openCommandContext } from './open-command-context.ts'
import { UsageError } from './usage-error.ts'

export interface ScheduleContext {
  readonly ctx: LedgerContext
  readonly boss: PgBoss
  close(): Promise<void>
}

/** Opens the ledger and pg-boss on it; exit 2 without `state.url`. */
export async function openScheduleContext(opts: { config?: string; job?: string }): Promise<ScheduleContext> {
  const config = loadConfig(opts.config, process.env, { ledgerOnly: true })
  if (config.state.url === undefined) {
    throw new UsageError(
      'schedules need a shared Postgres ledger: set state.url in the configuration (the embedded store serves one process, and `chatferry worker` processes run the schedule); ' +
        'or run `chatferry run --delta` from an external scheduler (cron, a Kubernetes CronJob)',
    )
  }
  const url = config.state.url
  const ctx = await openCommandContext({
    ...(opts.config !== undefined ? { config: opts.config } : {}),
    ...(opts.job !== undefined ? { job: opts.job } : {}),
    ledgerOnly: true,
  })
  try {
    const boss = await openScheduler(ctx.store.sessions, url, ctx.jobId)
    return {
      ctx,
      boss,
      async close() {
        try {
          await boss.stop({ graceful: false, close: true, timeout: 2000 })
        } finally {
          await ctx.close()
        }
      },
    }
  } catch (err) {
    await ctx.close()
    throw err
  }
}
