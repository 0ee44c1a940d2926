/** `chatferry fleet plan`: the dry run of every tenant and the fleet plan report (terminal, JSON, HTML). */
import { Command, Option } from 'commander'

import { runFleetPlan } from '../../fleet/fleet-plan.ts'
import { deprovisionedNote, keylessTenantJobs } from '../../fleet/fleet-run-tenants.ts'
import { createLogger } from '../../logger.ts'
import { formatFleetPlanReport } from '../../report/fleet-plan-report.ts'
import { EXIT } from '../exit-codes.ts'
import { openFleetLedger } from '../fleet-run-context.ts'
import { withHelp } from '../help.ts'
import { resolveConfigPath } from '../load-config.ts'
import { runStoppable } from '../signals.ts'
import { addFleetOptions, type FleetFlags, printLeftOut } from './fleet.ts'

export function registerFleetPlanCommand(fleet: Command): void {
  const plan = addFleetOptions(
    fleet
      .command('plan')
      .summary('dry run of every tenant: the fleet plan report')
      .description(
        "The dry run of every tenant (what `chatferry plan` does for one job: nothing sent, no item changed; each tenant's own plan report is kept in its job), " +
          'then the fleet plan report: a row per tenant (items to create per entity, skipped, rejected, import requests and time at its quota) and the fleet totals ' +
          '(requests, time at quota with the tenants in parallel, rejects by reason). A tenant whose source cannot be read is a row with its error. Sends nothing: ' +
          'needs neither CHATFERRY_FLEET_KEY nor provisioned apps.',
      ),
  )
    .option('--out <dir>', "write fleet-plan-report.json and .html there, and each tenant's plan report under tenants/<id>/", 'chatferry-reports')
    .addOption(new Option('--concurrency <n>', 'tenants planned at once').argParser((v) => Math.max(1, Number.parseInt(v, 10) || 1)).default(4))
    .option('--json', 'print the fleet plan report as JSON on stdout instead of the table')
  withHelp(plan, {
    exits: [
      [0, 'every tenant planned'],
      [1, "some tenant's plan failed for a reason a rerun can fix (its source unreachable), or SIGINT/SIGTERM"],
      [2, "usage or configuration error; or some tenant's source refuses its query or login (fix it first)"],
    ],
    examples: [
      ['fleet plan', 'the report of ./fleet.yaml into chatferry-reports/'],
      ['fleet plan --tenant acme --json', 'one tenant, JSON on stdout'],
    ],
  })
  plan.action(async (opts: FleetFlags & { out: string; concurrency: number }) => {
    process.exitCode = await runStoppable(createLogger(), 'the tenants being planned', async (stopper) => {
      const ctx = await openFleetLedger(opts.fleet, { keys: false, poolSize: 4 + opts.concurrency })
      try {
        const { jobs: tenants, deprovisioned } = await keylessTenantJobs(ctx.fleet, ctx.store, opts.tenant ?? [])
        printLeftOut(deprovisionedNote(ctx.fleet, deprovisioned))
        const result = await runFleetPlan({
          fleet: ctx.fleet.id,
          store: ctx.store,
          tenants,
          concurrency: opts.concurrency,
          outDir: resolveConfigPath(opts.out),
          signal: stopper.signal,
        })
        process.stdout.write(opts.json ? `${JSON.stringify(result.report, null, 2)}\n` : `${formatFleetPlanReport(result.report)}\n`)
        if (result.files && !opts.json) {
          process.stdout.write(`report: ${result.files.html} (JSON: ${result.files.json})\n`)
        }
        return result.report.totals.failed === 0 ? EXIT.OK : result.needsFix ? EXIT.USAGE : EXIT.ERROR
      } finally {
        await ctx.close()
      }
    })
  })
}
