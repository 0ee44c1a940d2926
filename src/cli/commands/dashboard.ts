/**
 * `chatferry dashboard`: a read-only web page over the ledger of one job, refreshed live (the
 * page, its server and what they read: src/cli/dashboard/). Loopback by default; any other address
 * needs a token (CHATFERRY_DASHBOARD_TOKEN), never taken on the command line where `ps` shows it.
 */
import type { Command } from 'commander'

import { defaultJobId } from '../../load/config.ts'
import { isLoopback, MIN_TOKEN_LENGTH, TOKEN_ENV } from '../dashboard/auth.ts'
import { openLedgerSource } from '../dashboard/ledger-source.ts'
import { startSampler } from '../dashboard/sampler.ts'
import { startDashboardServer } from '../dashboard/server.ts'
import { withHelp } from '../help.ts'
import { loadConfig } from '../load-config.ts'
import { configOption } from '../options.ts'
import { UsageError } from '../usage-error.ts'
import { JOB_OPTION_HELP } from './load.ts'

interface DashboardFlags {
  config: string
  job?: string
  host: string
  port: string
  refresh: string
}

export function registerDashboardCommand(program: Command): void {
  const dashboard = program
    .command('dashboard')
    .summary('a live web page of where the job stands')
    .description(
      'Serves a read-only web page over the ledger of the job, refreshed live without reloading: per entity planned, in flight, done, ' +
        'skipped, rejected and remaining (the numbers of `status --json`), the update lane per kind, items per minute over time against ' +
        'the quota line, the ETA at the observed rate and at the quota, rejects by reason with samples, and the runs with their owners ' +
        'and heartbeats. Everything is served by chatferry itself (no network needed). Needs no API key or source password; works ' +
        'against a Postgres ledger from any machine, and against the embedded store while a run holds it (read through that run). ' +
        `Listens on loopback unless --host says otherwise; then ${TOKEN_ENV} must hold a token of at least ${MIN_TOKEN_LENGTH} characters, ` +
        'asked of every request (Basic auth with the token as password, or Authorization: Bearer). Runs until stopped (Ctrl-C).',
    )
  withHelp(dashboard, {
    exits: [
      [0, 'stopped by a signal'],
      [1, 'the ledger could not be read, or the port is taken'],
      [2, 'usage or configuration error (an exposed address without a token)'],
    ],
    examples: [
      ['dashboard', 'http://127.0.0.1:8417/ for the job of ./chatferry.yaml'],
      [`${TOKEN_ENV}=… dashboard --host 0.0.0.0 --port 8080`, 'exposed, behind the token'],
    ],
  })
  dashboard
    .addOption(configOption())
    .option('--job <id>', JOB_OPTION_HELP)
    .option('--host <address>', 'address to listen on', '127.0.0.1')
    .option('--port <n>', 'port to listen on (0: any free port)', '8417')
    .option('--refresh <seconds>', 'how often the ledger is read and the page redraws', '2')
    .action(async (opts: DashboardFlags) => {
      const config = loadConfig(opts.config, process.env, { ledgerOnly: true })
      const port = Number(opts.port)
      const refresh = Number(opts.refresh)
      const problems: string[] = []
      if (!Number.isInteger(port) || port < 0 || port > 65535) {
        problems.push(`--port must be a port number, not ${opts.port}`)
      }
      if (!(refresh >= 0.5 && refresh <= 3600)) {
        problems.push(`--refresh must be between 0.5 and 3600 seconds, not ${opts.refresh}`)
      }
      const token = process.env[TOKEN_ENV] || undefined
      if (!isLoopback(opts.host) && (token === undefined || token.length < MIN_TOKEN_LENGTH)) {
        problems.push(
          `--host ${opts.host} exposes the dashboard beyond this machine: set ${TOKEN_ENV} to a token of at least ${MIN_TOKEN_LENGTH} characters`,
        )
      }
      if (problems.length > 0) {
        throw new UsageError(problems.join('; '))
      }
      const jobId = opts.job ?? process.env.CHATFERRY_JOB_ID ?? config.job?.id ?? defaultJobId(config.target.appId)
      const source = await openLedgerSource(config, opts.config, opts.job)
      const sampler = startSampler(source, jobId, config, refresh * 1000)
      try {
        await sampler.refresh()
        const server = await startDashboardServer({
          host: opts.host,
          port,
          ...(token !== undefined ? { token } : {}),
          refreshMs: refresh * 1000,
          view: () => sampler.current(),
        })
        process.stderr.write(`dashboard of job ${jobId} at ${server.url}${token !== undefined ? ' (token required)' : ''} — Ctrl-C stops it\n`)
        await new Promise<void>((resolve) => {
          process.once('SIGINT', resolve)
          process.once('SIGTERM', resolve)
        })
        await server.close()
      } finally {
        sampler.stop()
        await source.close()
      }
    })
}
