import type { Command } from 'commander'

import { quotaTiming } from '../../load/config.ts'
import { createLogger } from '../../logger.ts'
import { DEFAULT_SAMPLE, runVerify } from '../../report/verify.ts'
import { JOB_ADVICE } from '../../report/verify-run.ts'
import { DEFAULT_CHAT_REQUESTS_PER_MINUTE } from '../../target/config.ts'
import { INVOCATION } from '../../version.ts'
import { withHelp } from '../help.ts'
import { requireKnownJob } from '../job-guard.ts'
import { openCommandContext } from '../open-command-context.ts'
import { configOption } from '../options.ts'
import { parseChatRpm, printReportResult } from '../report-output.ts'
import { notifyVerify } from '../run-notify.ts'
import { runStoppable } from '../signals.ts'
import { UsageError } from '../usage-error.ts'
import { JOB_OPTION_HELP } from './load.ts'

interface VerifyFlags {
  config: string
  job?: string
  out: string
  sample: string
  chatRpm?: string
  source?: boolean
  json?: boolean
  replan?: boolean
}

/** `chatferry verify`: reconcile the platform with the ledger and the source after loading. */
export function registerVerifyCommand(program: Command): void {
  const verify = program
    .command('verify')
    .summary("after loading: reconcile the platform's contents with the ledger and the source")
    .description(
      "After loading: reconcile the platform's contents with the ledger and the source through the chat list endpoints — " +
        'users, groups and members per group (banned included) id by id; messages counted per conversation and a sample ' +
        'compared on sender, receiver, sentAt and text. Paced below the chat rate limit. ' +
        'Writes <out>/verify-report.json and <out>/verify-report.html.',
    )
  withHelp(verify, {
    exits: [
      [0, 'no unexplained mismatch (with --replan: what it planned again counts as explained until `load`)'],
      [3, 'unexplained mismatches (listed with legacy id and target key)'],
      [1, 'stopped by an error (platform or source unreachable) or by SIGINT/SIGTERM'],
      [2, 'usage or configuration error, unknown job'],
    ],
    examples: [
      ['verify', 'the job of ./chatferry.yaml; reports in ./chatferry-reports'],
      ['verify --sample 1000 --no-source', 'compare more messages; skip the source row counts'],
      ['verify --job acme-chat --json', 'another job of the ledger; the JSON report on stdout'],
      ['verify --replan', 'plan again what the platform lacks (or still shows after a removal); then `chatferry load` sends it'],
    ],
  })
  verify
    .addOption(configOption())
    .option('--job <id>', JOB_OPTION_HELP)
    .option('--out <dir>', 'directory of the JSON and HTML reports', 'chatferry-reports')
    .option('--sample <n>', 'messages compared field by field', String(DEFAULT_SAMPLE))
    .option('--chat-rpm <n>', `chat reads per minute (default: target.chatQuota.requestsPerMinute, ${DEFAULT_CHAT_REQUESTS_PER_MINUTE})`)
    .option('--no-source', 'do not compare with the source row counts')
    .option('--json', 'print the JSON report instead of the summary')
    .option(
      '--replan',
      'plan again what the ledger and the platform disagree on: done items absent on the platform, rejected items present there, removals (a kick, a delete) not applied; `chatferry load` then sends them',
    )
    .action(async (opts: VerifyFlags) => {
      const sample = Number(opts.sample)
      if (!Number.isInteger(sample) || sample < 0) {
        throw new UsageError(`--sample: expected a whole number ≥ 0, got ${opts.sample}`)
      }
      const chatRpm = parseChatRpm(opts.chatRpm)
      const logger = createLogger()
      process.exitCode = await runStoppable(logger, 'the request in hand', async (stopper) => {
        const ctx = await openCommandContext({ config: opts.config, ...(opts.job !== undefined ? { job: opts.job } : {}) })
        try {
          await requireKnownJob(ctx)
          const result = await runVerify(ctx, {
            signal: stopper.signal,
            sample,
            outDir: opts.out,
            source: opts.source !== false,
            replan: opts.replan === true,
            advice: { ...JOB_ADVICE, rejects: `${INVOCATION} rejects -c ${ctx.config.file}` },
            ...(chatRpm !== undefined ? { chatRequestsPerMinute: chatRpm } : {}),
            chatTiming: quotaTiming(ctx.load),
          })
          // The report names the rejects the operator accepted, with the command that says who, when and why.
          const code = printReportResult(result, opts.json)
          await notifyVerify(ctx, logger, result)
          return code
        } finally {
          await ctx.close()
        }
      })
    })
}
