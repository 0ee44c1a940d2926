/**
 * `chatferry fleet dashboard`: a read-only web page of every tenant of the fleet, refreshed live
 * (the numbers of `fleet status`, from the ledger only: no CHATFERRY_FLEET_KEY, no source). The
 * page and its view: src/cli/dashboard/fleet-page.ts, fleet-sampler.ts; listening and the token as
 * `chatferry dashboard` (src/cli/dashboard/serve.ts).
 */
import type { Command } from 'commander'

import { MIN_TOKEN_LENGTH, TOKEN_ENV } from '../dashboard/auth.ts'
import { FLEET_PAGE_HTML, FLEET_PAGE_JS } from '../dashboard/fleet-page.ts'
import { startFleetSampler } from '../dashboard/fleet-sampler.ts'
import { addServeOptions, type ServeFlags, serveSettings, serveUntilStopped } from '../dashboard/serve.ts'
import { openFleetLedger } from '../fleet-run-context.ts'
import { withHelp } from '../help.ts'
import { addFleetOptions, type FleetFlags } from './fleet.ts'

export function registerFleetDashboardCommand(fleet: Command): void {
  const dashboard = addServeOptions(
    addFleetOptions(
      fleet
        .command('dashboard')
        .summary('a live web page of every tenant: state, progress, rate, ETA, rejects, last error')
        .description(
          'Serves a read-only web page of the fleet, refreshed live without reloading: a row per tenant with its state, done/remaining per entity, ' +
            "its rate in the last minute against its app's quota, the ETA at that quota, its rejects, its last run and its last error (the numbers of " +
            '`fleet status --json`), the totals, and items per minute over time against the quotas together. Reads only the ledger: needs neither ' +
            `CHATFERRY_FLEET_KEY nor any source, and shows no key. Listens on loopback unless --host says otherwise; then ${TOKEN_ENV} must hold a ` +
            `token of at least ${MIN_TOKEN_LENGTH} characters, asked of every request. Runs until stopped (Ctrl-C).`,
        ),
    ),
  )
  withHelp(dashboard, {
    exits: [
      [0, 'stopped by a signal'],
      [1, 'the ledger could not be read, or the port is taken'],
      [2, 'usage or configuration error (the fleet file; an exposed address without a token)'],
    ],
    examples: [
      ['fleet dashboard', 'http://127.0.0.1:8417/ for every tenant of ./fleet.yaml'],
      ['fleet dashboard -f prod.yaml --host 0.0.0.0', `exposed, behind the token in ${TOKEN_ENV}`],
    ],
  })
  dashboard.action(async (opts: FleetFlags & ServeFlags) => {
    const settings = serveSettings(opts)
    const ctx = await openFleetLedger(opts.fleet, { keys: false, poolSize: 2 })
    const sampler = startFleetSampler(ctx.fleet, ctx.store, opts.tenant ?? [], settings.refreshMs)
    try {
      await sampler.refresh()
      await serveUntilStopped(settings, `fleet ${ctx.fleet.id}`, { html: FLEET_PAGE_HTML, js: FLEET_PAGE_JS }, () => sampler.current())
    } finally {
      sampler.stop()
      await ctx.close()
    }
  })
}
