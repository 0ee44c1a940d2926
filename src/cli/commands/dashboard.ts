/**
 * `chatferry dashboard`: a read-only web page over the ledger of one job, refreshed live (the
 * page, its server and what they read: src/cli/dashboard/). Loopback by default; any other address
 * needs a token (CHATFERRY_DASHBOARD_TOKEN), never taken on the command line where `ps` shows it.
 */
import type { Command } from 'commander'

import { defaultJobId } from '../../load/config.ts'
import { MIN_TOKEN_LENGTH, TOKEN_ENV } from '../dashboard/auth.ts'
import { openLedgerSource } from '../dashboard/ledger-source.ts'
import { PAGE_HTML, PAGE_JS } from '../dashboard/page.ts'
import { startSampler } from '../dashboard/sampler.ts'
import { addServeOptions, type ServeFlags, serveSettings, serveUntilStopped } from '../dashboard/serve.ts'
import { withHelp } from '../help.ts'
import { loadConfig } from '../load-config.ts'
import { configOption } from '../options.ts'
import { JOB_OPTION_HELP } from './load.ts'

interface DashboardFlags extends ServeFlags {
  config: string
  job?: string
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
      ['dashboard --host 0.0.0.0 --port 8080', `exposed, behind the token in ${TOKEN_ENV}`],
    ],
  })
  addServeOptions(dashboard.addOption(configOption()).option('--job <id>', JOB_OPTION_HELP)).action(async (opts: DashboardFlags) => {
    const config = loadConfig(opts.config, process.env, { ledgerOnly: true })
    const settings = serveSettings(opts)
    const jobId = opts.job ?? process.env.CHATFERRY_JOB_ID ?? config.job?.id ?? defaultJobId(config.target.appId)
    const source = await openLedgerSource(config, opts.config, jobId)
    const sampler = startSampler(source, jobId, config, settings.refreshMs)
    try {
      await sampler.refresh()
      await serveUntilStopped(settings, `job ${jobId}`, { html: PAGE_HTML, js: PAGE_JS }, () => sampler.current())
    } finally {
      sampler.stop()
      await source.close()
    }
  })
}
