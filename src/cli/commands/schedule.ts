import type { Command } from 'commander'

import { cronProblem, type JobSchedule, listSchedules, saveSchedule } from '../../job/job-schedule.ts'
import { CliError } from '../cli-error.ts'
import { noteSummary, startSummary } from '../command-summary.ts'
import { EXIT } from '../exit-codes.ts'
import { EXITS, withHelp } from '../help.ts'
import { requireKnownJob } from '../job-guard.ts'
import { configOption, jsonOption } from '../options.ts'
import { openScheduleContext } from '../schedule-context.ts'
import { UsageError } from '../usage-error.ts'
import { JOB_OPTION_HELP } from './load.ts'

interface ScheduleFlags {
  config?: string
  job?: string
  cron: string
  delta?: boolean
  replace?: boolean
  json?: boolean
}

/** `run --delta` or `run`, as a schedule's mode reads in messages. */
export function describeMode(s: Pick<JobSchedule, 'mode'>): string {
  return s.mode === 'delta' ? 'run --delta' : 'run'
}

/** `chatferry schedule`: the job's recurring run as a pg-boss schedule, executed by `chatferry worker` processes. */
export function registerScheduleCommand(program: Command): void {
  const cmd = program
    .command('schedule')
    .summary('run the job (or its deltas) on a cron schedule, executed by workers (needs state.url)')
    .description(
      "Register the job's recurring run as a pg-boss schedule in the ledger's Postgres: at each occurrence one `chatferry worker` " +
        'of the job runs `chatferry run` (with --delta, `chatferry run --delta`) for it. A trigger while a run of the job is going is ' +
        'skipped and logged. One schedule per job: --replace changes it. Cron in UTC: 5 fields, or 6 with seconds first ' +
        '(pg-boss sends at most one trigger a minute). Needs state.url and a job that ran once.',
    )
    .addOption(configOption())
    .option('--job <id>', JOB_OPTION_HELP)
    .requiredOption('--cron <expression>', 'when to run, in UTC, e.g. "*/15 * * * *"')
    .option('--delta', 'run `chatferry run --delta` (rows added or changed since the last read), not a full `run`')
    .option('--replace', 'replace the job’s existing schedule instead of refusing')
    .addOption(jsonOption('print one JSON summary object on stdout (command, status, exitCode, jobId, schedule, replaced)'))
  withHelp(cmd, {
    exits: [
      [0, 'the schedule is saved'],
      EXITS.error,
      [
        2,
        'usage or configuration error: a cron expression that does not parse, no state.url, an unknown job, the job already has a schedule (without --replace)',
      ],
    ],
    examples: [
      ['schedule --cron "*/15 * * * *" --delta', 'a delta every 15 minutes, run by the workers of the job'],
      ['schedule --cron "0 2 * * *" --delta --replace --json', 'move it to 02:00 UTC; one JSON object on stdout'],
    ],
  })
  cmd.action(async (opts: ScheduleFlags) => {
    startSummary('schedule', opts.json === true)
    const problem = cronProblem(opts.cron)
    if (problem !== undefined) {
      throw new UsageError(`--cron: ${problem}`)
    }
    const mode = opts.delta ? 'delta' : 'run'
    const sc = await openScheduleContext(opts)
    try {
      noteSummary({ jobId: sc.ctx.jobId })
      await requireKnownJob(sc.ctx, { nothingPlanned: true })
      const [existing] = await listSchedules(sc.boss, sc.ctx.jobId)
      if (existing !== undefined && !opts.replace) {
        throw new CliError(
          `job ${sc.ctx.jobId} already has a schedule: ${describeMode(existing)} on "${existing.cron}" (UTC, since ${existing.createdOn}); ` +
            'one schedule per job: pass --replace to change it, or `chatferry unschedule` first',
          EXIT.USAGE,
        )
      }
      const saved = await saveSchedule(sc.boss, sc.ctx.jobId, opts.cron, mode)
      if (opts.json) {
        const summary = {
          command: 'schedule',
          status: 'succeeded',
          exitCode: EXIT.OK,
          jobId: sc.ctx.jobId,
          schedule: saved,
          replaced: existing ?? null,
        }
        process.stdout.write(`${JSON.stringify(summary)}\n`)
      } else {
        process.stdout.write(
          `job ${sc.ctx.jobId}: ${describeMode(saved)} scheduled on "${saved.cron}" (UTC)${existing ? `, replacing "${existing.cron}"` : ''}; ` +
            '`chatferry worker` processes of the job run it\n',
        )
      }
    } finally {
      await sc.close()
    }
    process.exitCode = EXIT.OK
  })
}
