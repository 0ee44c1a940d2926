import type { Command } from 'commander'

import { removeSchedule } from '../../job/job-schedule.ts'
import { noteSummary, startSummary } from '../command-summary.ts'
import { EXIT } from '../exit-codes.ts'
import { EXITS, withHelp } from '../help.ts'
import { configOption, jsonOption } from '../options.ts'
import { openScheduleContext } from '../schedule-context.ts'
import { JOB_OPTION_HELP } from './load.ts'
import { describeMode } from './schedule.ts'

/** `chatferry unschedule`: removes the job's schedule; a run already going finishes. */
export function registerUnscheduleCommand(program: Command): void {
  const cmd = program
    .command('unschedule')
    .summary("remove the job's schedule (needs state.url)")
    .description(
      "Remove the job's pg-boss schedule: workers send no more triggers for it. A scheduled run already going finishes; " +
        'a job without a schedule is no error (exit 0, removed: null).',
    )
    .addOption(configOption())
    .option('--job <id>', JOB_OPTION_HELP)
    .addOption(jsonOption('print one JSON summary object on stdout (command, status, exitCode, jobId, removed)'))
  withHelp(cmd, {
    exits: [[0, 'the job has no schedule now'], EXITS.error, [2, 'usage or configuration error; no state.url']],
    examples: [
      ['unschedule', 'stop the scheduled runs of the job of ./chatferry.yaml'],
      ['unschedule --job acme-chat --json', 'another job of the ledger; one JSON object on stdout'],
    ],
  })
  cmd.action(async (opts: { config?: string; job?: string; json?: boolean }) => {
    startSummary('unschedule', opts.json === true)
    const sc = await openScheduleContext(opts)
    try {
      noteSummary({ jobId: sc.ctx.jobId })
      const removed = await removeSchedule(sc.boss, sc.ctx.jobId)
      if (opts.json) {
        process.stdout.write(
          `${JSON.stringify({ command: 'unschedule', status: 'succeeded', exitCode: EXIT.OK, jobId: sc.ctx.jobId, removed: removed ?? null })}\n`,
        )
      } else {
        process.stdout.write(
          removed
            ? `job ${sc.ctx.jobId}: schedule removed (${describeMode(removed)} on "${removed.cron}")\n`
            : `job ${sc.ctx.jobId} had no schedule\n`,
        )
      }
    } finally {
      await sc.close()
    }
    process.exitCode = EXIT.OK
  })
}
