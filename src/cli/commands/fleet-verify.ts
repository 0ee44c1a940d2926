/** `chatferry fleet verify`: reconcile every tenant's app with its ledger and source (verify, per tenant). */
import type { Command } from 'commander'

import { deprovisionedNote, fleetTenantJobs } from '../../fleet/fleet-run-tenants.ts'
import { failedVerdict, runFleetVerify } from '../../fleet/fleet-verify.ts'
import { createLogger } from '../../logger.ts'
import { EXIT } from '../exit-codes.ts'
import { openFleetLedger } from '../fleet-run-context.ts'
import { withHelp } from '../help.ts'
import { resolveConfigPath } from '../load-config.ts'
import { runStoppable } from '../signals.ts'
import { addFleetOptions, type FleetFlags, printLeftOut } from './fleet.ts'

export function registerFleetVerifyCommand(fleet: Command): void {
  const verify = addFleetOptions(
    fleet
      .command('verify')
      .summary("after loading: verify every tenant's app against its ledger and source")
      .description(
        "`chatferry verify` for every tenant (at most --concurrency at once), each through its own app's chat interface at its chat quota: users, groups and members id by id, " +
          "messages counted per conversation and a sample compared field by field, the source's row counts. One line per tenant; each tenant's reports under <out>/tenants/<id>/. Needs CHATFERRY_FLEET_KEY.",
      ),
  )
    .option('--out <dir>', "directory of the tenants' verify reports", 'chatferry-reports')
    .option('--sample <n>', 'messages compared field by field per tenant', '1000')
    .option('--concurrency <n>', 'tenants verified at once', '4')
    .option('--replan', "plan again what a tenant's ledger calls loaded and its app lacks (then `fleet run --tenant` loads it)")
    .option('--json', 'print one JSON object: fleet, exitCode, tenants[] (verdict, mismatches, unexplained, accepted, report, reason)')
  withHelp(verify, {
    exits: [
      [0, 'every tenant verified: no unexplained mismatch'],
      [3, 'some tenant has unexplained mismatches: read its report'],
      [1, "some tenant's verify could not run (its app or source unreachable), or SIGINT/SIGTERM: run it again"],
      [2, 'usage or configuration error, CHATFERRY_FLEET_KEY missing; or some tenant needs a fix first (not provisioned, never run)'],
    ],
    examples: [['fleet verify', 'every tenant of ./fleet.yaml; reports in ./chatferry-reports/tenants/<id>/']],
  })
  verify.action(async (opts: FleetFlags & { out: string; sample: string; concurrency: string; replan?: boolean }) => {
    process.exitCode = await runStoppable(createLogger(), 'the requests in hand', async (stopper) => {
      const ctx = await openFleetLedger(opts.fleet, { keys: true, poolSize: 6 })
      try {
        const { jobs, unusable, deprovisioned } = await fleetTenantJobs(ctx.fleet, ctx.store, ctx.vault(), { only: opts.tenant ?? [] })
        printLeftOut(deprovisionedNote(ctx.fleet, deprovisioned))
        const verdicts = await runFleetVerify({
          store: ctx.store,
          tenants: jobs,
          concurrency: Number(opts.concurrency) || 4,
          outDir: resolveConfigPath(opts.out),
          sample: Number(opts.sample),
          signal: stopper.signal,
          fleetFile: ctx.fleet.file,
          replan: opts.replan === true,
        })
        const all = [...unusable.map((u) => failedVerdict(u, u.reason, true)), ...verdicts]
        const code = all.some((v) => v.verdict === 'failed' && v.needsFix)
          ? EXIT.USAGE
          : all.some((v) => v.verdict === 'failed')
            ? EXIT.ERROR
            : all.some((v) => v.verdict === 'mismatches')
              ? EXIT.REJECTED
              : EXIT.OK
        if (opts.json) {
          process.stdout.write(`${JSON.stringify({ fleet: ctx.fleet.id, exitCode: code, tenants: all })}\n`)
        } else {
          for (const v of all) {
            process.stdout.write(
              `${v.tenantId}  ${v.verdict}  ${v.mismatches} mismatches (${v.unexplained} unexplained)${v.accepted > 0 ? `, ${v.accepted} accepted rejects (\`chatferry rejects --accepted --job ${v.jobId}\`)` : ''}${v.report ? `  ${v.report}` : ''}${v.reason ? `  — ${v.reason}` : ''}\n`,
            )
          }
          process.stdout.write(`fleet ${ctx.fleet.id}: ${all.filter((v) => v.verdict === 'passed').length} of ${all.length} tenants verified\n`)
        }
        return code
      } finally {
        await ctx.close()
      }
    })
  })
}
