import { type Command, Option } from 'commander'

import { runPlan } from '../../job/run-plan.ts'
import { createLogger } from '../../logger.ts'
import { GATE_METRICS, parseGates } from '../../report/fail-on.ts'
import { DEFAULT_CHAT_REQUESTS_PER_MINUTE } from '../../target/config.ts'
import { withHelp } from '../help.ts'
import { admitJob } from '../job-guard.ts'
import { openCommandContext } from '../open-command-context.ts'
import { configOption } from '../options.ts'
import { createPlanProgress } from '../progress-drawer.ts'
import { parseChatRpm, printReportResult } from '../report-output.ts'
import { runStoppable } from '../signals.ts'
import { UsageError } from '../usage-error.ts'
import { NEW_JOB_FLAG_HELP, NEW_JOB_OPTION_HELP } from './load.ts'

interface PlanFlags {
  config: string
  job?: string
  newJob?: boolean
  out: string
  failOn: string[]
  checkTarget?: boolean
  chatRpm?: string
  json?: boolean
  detectDeletes?: boolean
}

/** `chatferry plan`: the dry-run cutover report (nothing is sent, no item's state changes). */
export function registerPlanCommand(program: Command): void {
  const plan = program
    .command('plan')
    .summary('dry run: the cutover report of what a run would do; nothing sent')
    .description(
      'Dry run: read the legacy source, map and validate every record, and report what a run would do — ' +
        'per entity: to create, already loaded (unchanged / changed since), skipped by policy, rejected, referential ' +
        'problems, placeholders, id renames, joinedAt clamps, retention; the update intents a delta would record for ' +
        'loaded items, and those changes.conflicts would hold back, drop or apply over a change made on the platform; ' +
        'the cost at the quota; the diff against the ' +
        'previous plan. Nothing is sent to the data-import interface and no item of the ledger changes. ' +
        'Writes <out>/plan-report.json and <out>/plan-report.html.',
    )
  withHelp(plan, {
    exits: [
      [0, 'report written, every gate passed'],
      [3, 'a --fail-on gate failed, or the --check-target pre-flight found a problem'],
      [1, 'stopped by an error (source unreachable) or by SIGINT/SIGTERM'],
      [
        2,
        'usage or configuration error; a job the ledger does not hold while it holds others, without --new-job; the source refused a query or login (missing table or column)',
      ],
    ],
    examples: [
      ['plan', 'the terminal summary; reports in ./chatferry-reports'],
      ['plan --check-target --out reports/', 'also ask the platform what already exists'],
      ["plan --fail-on 'rejected>0' --fail-on 'hours>48'", 'in CI: exit 3 on any reject or a load over two days'],
      ['plan --json > plan.json', 'the JSON report on stdout'],
    ],
  })
  plan
    .addOption(configOption())
    .option('--job <id>', NEW_JOB_OPTION_HELP)
    .option('--new-job', NEW_JOB_FLAG_HELP)
    .option('--out <dir>', 'directory of the JSON and HTML reports', 'chatferry-reports')
    .addOption(
      new Option(
        '--fail-on <gate>',
        `exit 3 when <metric>[.<entity>]<op><n> holds, e.g. rejected>0, rejected.messages>=10, hours>48; repeatable; metrics: ${Object.keys(GATE_METRICS).join(', ')}`,
      )
        .argParser((value: string, previous: string[] = []) => [...previous, value])
        .default([]),
    )
    .option(
      '--check-target',
      'pre-flight against the platform (read-only chat lists): apiKey and full access, region, which uids/guids/members already exist',
    )
    .option(
      '--chat-rpm <n>',
      `chat reads per minute of the pre-flight (default: target.chatQuota.requestsPerMinute, ${DEFAULT_CHAT_REQUESTS_PER_MINUTE})`,
    )
    .option('--detect-deletes', 'also count loaded messages hard-deleted from the source (a keys-only scan of the messages table)')
    .option('--json', 'print the JSON report instead of the summary')
    .action(async (opts: PlanFlags) => {
      let gates
      try {
        gates = parseGates(opts.failOn)
      } catch (err) {
        throw new UsageError((err as Error).message)
      }
      const chatRpm = parseChatRpm(opts.chatRpm)
      const logger = createLogger()
      process.exitCode = await runStoppable(logger, 'the page being read, then closing the source read', async (stopper) => {
        const ctx = await openCommandContext({ config: opts.config, ...(opts.job !== undefined ? { job: opts.job } : {}) })
        const progress = createPlanProgress(ctx.config.target.quota, logger)
        try {
          // Before the source is read: a mistyped --job is no new job to report on.
          await admitJob(ctx, opts.newJob === true)
          const result = await runPlan(ctx, {
            onPage: progress.onPage,
            signal: stopper.signal,
            outDir: opts.out,
            gates,
            checkTarget: opts.checkTarget === true,
            detectDeletes: opts.detectDeletes === true,
            ...(chatRpm !== undefined ? { chatRequestsPerMinute: chatRpm } : {}),
          })
          progress.stop()
          return printReportResult(result, opts.json)
        } finally {
          progress.stop()
          await ctx.close()
        }
      })
    })
}
