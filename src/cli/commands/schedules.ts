import type { Command } from 'commander'

import { listSchedules } from '../../job/job-schedule.ts'
import { startSummary } from '../command-summary.ts'
import { EXIT } from '../exit-codes.ts'
import { EXITS, withHelp } from '../help.ts'
import { configOption, jsonOption, printTable } from '../options.ts'
import { openScheduleContext } from '../schedule-context.ts'
import { describeMode } from './schedule.ts'

/** `chatferry schedules`: every job's schedule in the ledger. */
export function registerSchedulesCommand(program: Command): void {
  const cmd = program
    .command('schedules')
    .summary('list the schedules of the ledger’s jobs (needs state.url)')
    .description("List every job's schedule in the ledger (pg-boss schedules): job, what runs, cron (UTC), since when.")
    .addOption(configOption())
    .addOption(jsonOption('print one JSON object on stdout: { schedules: [{ jobId, cron, mode, timezone, queue, createdOn, updatedOn }] }'))
  withHelp(cmd, {
    exits: [EXITS.ok, EXITS.error, [2, 'usage or configuration error; no state.url']],
    examples: [
      ['schedules', 'a table of the schedules'],
      ['schedules --json', 'for a script: one JSON object'],
    ],
  })
  cmd.action(async (opts: { config?: string; json?: boolean }) => {
    startSummary('schedules', opts.json === true)
    const sc = await openScheduleContext(opts)
    try {
      const all = await listSchedules(sc.boss)
      if (opts.json) {
        process.stdout.write(`${JSON.stringify({ command: 'schedules', status: 'succeeded', exitCode: EXIT.OK, schedules: all })}\n`)
      } else if (all.length === 0) {
        process.stdout.write('no schedules (chatferry schedule --cron "*/15 * * * *" --delta adds one)\n')
      } else {
        printTable([['JOB', 'RUNS', 'CRON (UTC)', 'SINCE'], ...all.map((s) => [s.jobId, describeMode(s), s.cron, s.createdOn])])
      }
    } finally {
      await sc.close()
    }
    process.exitCode = EXIT.OK
  })
}
