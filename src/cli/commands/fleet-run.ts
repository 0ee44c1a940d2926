/**
 * The migration half of `chatferry fleet`: `run` (plan and load every tenant), `worker` (serve
 * every tenant's load queue), `status` (one line per tenant) and `plan` (the fleet plan report).
 * Added to the `fleet` command group (commands/fleet.ts holds it and the provisioning subcommands).
 */
import { Command, Option } from 'commander'

import { tenantNeedsFixNotification } from '../../fleet/fleet-notify.ts'
import { runFleet } from '../../fleet/fleet-run.ts'
import { fleetExitCode, type TenantOutcome } from '../../fleet/fleet-run-outcome.ts'
import { buildFleetRunSummary, formatFleetRunSummary } from '../../fleet/fleet-run-summary.ts'
import { deprovisionedNote, fleetTenantJobs } from '../../fleet/fleet-run-tenants.ts'
import { servedTenants, serveFleet } from '../../fleet/fleet-worker.ts'
import { createNotifier } from '../../job/notify/notifier.ts'
import { secretsOf } from '../../job/notify/secrets.ts'
import { markDeadRuns } from '../../job/run-row.ts'
import { createLogger } from '../../logger.ts'
import { EXIT } from '../exit-codes.ts'
import { startFleetMetricsEndpoint } from '../fleet-metrics-endpoint.ts'
import { openFleetLedger } from '../fleet-run-context.ts'
import { withHelp } from '../help.ts'
import { runStoppable } from '../signals.ts'
import { UsageError } from '../usage-error.ts'
import { addFleetOptions, type FleetFlags, printLeftOut } from './fleet.ts'
import { registerFleetDashboardCommand } from './fleet-dashboard.ts'
import { registerFleetPlanCommand } from './fleet-plan.ts'
import { registerFleetStatusCommand } from './fleet-status.ts'
import { registerFleetVerifyCommand } from './fleet-verify.ts'

const int = (v: string) => {
  const n = Number(v)
  if (!Number.isInteger(n) || n < 1) {
    throw new Error(`must be a positive integer, got ${v}`)
  }
  return n
}

function addLoadFlags(cmd: Command): Command {
  return cmd
    .addOption(
      new Option('--concurrency <n>', "batches in flight per tenant in this process (default: the tenant's load.concurrency, else 4)").argParser(int),
    )
    .addOption(
      new Option('--lease-seconds <n>', 'lease of a batch before another worker takes it over (default: load.leaseSeconds, else 120)').argParser(int),
    )
}

function loadFlags(opts: FleetFlags) {
  return {
    ...(opts.concurrency !== undefined ? { concurrency: opts.concurrency } : {}),
    ...(opts.leaseSeconds !== undefined ? { leaseSeconds: opts.leaseSeconds } : {}),
  }
}

/** The `fleet` group (created here when the provisioning half has not created it) with run, worker, status, plan, verify and dashboard. */
export function registerFleetRunCommands(program: Command): void {
  const fleet =
    program.commands.find((c) => c.name() === 'fleet') ??
    program.command('fleet').summary('tenant fleets: one app per tenant, migrated in parallel').description('Tenant fleets: see docs/fleets.md.')
  registerFleetRun(fleet)
  registerFleetWorker(fleet)
  registerFleetStatusCommand(fleet)
  registerFleetPlanCommand(fleet)
  registerFleetVerifyCommand(fleet)
  registerFleetDashboardCommand(fleet)
}

function registerFleetRun(fleet: Command): void {
  const run = addLoadFlags(
    addFleetOptions(
      fleet
        .command('run')
        .summary('plan and load every tenant in parallel, each at its own app quota; resumable')
        .description(
          'Plan every tenant of the fleet (at most --plan-concurrency at once) and load each one as soon as it is planned, all in parallel, ' +
            "each tenant's batches drawing on its own app's quota, in this process and in every `chatferry fleet worker` of the fleet. " +
            "A tenant's 429s, errors or broken source never stall another: it ends failed with its reason and the others finish. " +
            'Needs CHATFERRY_FLEET_KEY (the stored app keys) and provisioned tenants. Rerun after any stop: every tenant resumes from its ledger.',
        ),
    ),
  )
    .option('--delta', "read only rows added or changed since each tenant's last completed read")
    .option('--reconcile-keys', "with --delta: also plan every source row a tenant's ledger never planned (a keys-only read of each entity)")
    .addOption(new Option('--plan-concurrency <n>', 'tenants planned at once (each holds one source read open)').argParser(int).default(8))
    .option('--json', 'print one JSON summary object on stdout (status, exitCode, fleet, durationMs, tenants[]); logs on stderr')
  withHelp(run, {
    exits: [
      [0, 'every tenant done: every item done or skipped by policy'],
      [3, 'every tenant finished, some with rejected items: chatferry rejects --job <fleet>_<tenant>'],
      [1, 'some tenant failed for a reason a rerun can fix (an outage of its source or app), or SIGINT/SIGTERM: run the same command again'],
      [
        2,
        'usage or configuration error, or CHATFERRY_FLEET_KEY missing (nothing done); or some tenant needs a fix first — not provisioned, its key refused, its source refuses the query or login, a configuration problem — the others ran',
      ],
    ],
    examples: [
      ['fleet run', 'migrate every tenant of ./fleet.yaml'],
      ['fleet run --tenant acme --tenant globex --json', 'two tenants, one JSON summary for a scheduler'],
      ['fleet run --delta', "catch every tenant up on its source's changes"],
    ],
  })
  run.action(async (opts: FleetFlags & { delta?: boolean; reconcileKeys?: boolean; planConcurrency: number }) => {
    if (opts.reconcileKeys && !opts.delta) {
      throw new UsageError('--reconcile-keys needs --delta: a full run reads every row anyway (fleet run --delta --reconcile-keys)')
    }
    const logger = createLogger()
    const startedAt = Date.now()
    const code = await runStoppable(logger, 'the batches in flight', async (stopper) => {
      const ctx = await openFleetLedger(opts.fleet, { keys: true, poolSize: 12 })
      try {
        const { jobs, unusable, deprovisioned } = await fleetTenantJobs(ctx.fleet, ctx.store, ctx.vault(), {
          only: opts.tenant ?? [],
          loadFlags: loadFlags(opts),
        })
        printLeftOut(deprovisionedNote(ctx.fleet, deprovisioned))
        for (const j of jobs) {
          await markDeadRuns(ctx.store, j.jobId).catch(() => 0)
        }
        // A tenant that needs a fix is told as it ends (those that cannot even start: now).
        const notifier = createNotifier(ctx.fleet.parsed.notify, logger, secretsOf(ctx.fleet.parsed))
        const tellNeedsFix = (o: TenantOutcome) => {
          const n = tenantNeedsFixNotification(ctx.fleet.id, o)
          if (n !== undefined) {
            notifier.send(n)
          }
        }
        const failedFirst: TenantOutcome[] = unusable.map((u) => ({
          tenantId: u.tenantId,
          jobId: u.jobId,
          state: 'failed',
          needsFix: true,
          reason: u.reason,
          stats: [],
        }))
        failedFirst.forEach(tellNeedsFix)
        const endpoint = await startFleetMetricsEndpoint(ctx, opts.tenant ?? [], logger)
        let outcomes: TenantOutcome[]
        try {
          outcomes = await runFleet({
            store: ctx.store,
            tenants: jobs,
            mode: opts.delta ? 'delta' : 'full',
            reconcileKeys: opts.reconcileKeys === true,
            planConcurrency: opts.planConcurrency,
            logger,
            signal: stopper.signal,
            ...(endpoint ? { ticks: endpoint.metrics } : {}),
            onTenant: (tenant, phase, outcome) => {
              logger.info(
                { tenant, phase, ...(outcome ? { state: outcome.state, reason: outcome.reason } : {}) },
                `tenant ${tenant}: ${outcome?.state ?? phase}`,
              )
              if (outcome !== undefined) {
                tellNeedsFix(outcome)
              }
            },
          })
        } finally {
          await endpoint?.stop()
        }
        const order = ctx.fleet.tenants.map((t) => t.id)
        const all = [...failedFirst, ...outcomes].sort((a, b) => order.indexOf(a.tenantId) - order.indexOf(b.tenantId))
        const exit = fleetExitCode(all)
        const summary = buildFleetRunSummary(ctx.fleet.id, all, exit, Date.now() - startedAt)
        process.stdout.write(opts.json ? `${JSON.stringify(summary)}\n` : formatFleetRunSummary(summary))
        await notifier.flush()
        return exit
      } finally {
        await ctx.close()
      }
    })
    process.exitCode = code
  })
}

function registerFleetWorker(fleet: Command): void {
  const worker = addLoadFlags(
    addFleetOptions(
      fleet
        .command('worker')
        .summary("serve every tenant's load until stopped")
        .description(
          'Serve the load of every tenant of the fleet until SIGINT/SIGTERM: each tenant with work (items planned or in flight, updates pending; the ledger is asked every 2 s for all tenants at once) ' +
            "has its own loader here, drawing on its own app's quota, with --concurrency batches in flight at most, so every tenant with work has lanes in every worker; " +
            'a loader ends after 60 s without work. Run any number, on any number of machines ' +
            'sharing the fleet ledger. A tenant whose loader stops (its key refused, an outage past load.giveUpAfterMs) is started again 30 s later. ' +
            'Needs CHATFERRY_FLEET_KEY.',
        ),
    ),
  )
  withHelp(worker, {
    exits: [
      [0, 'stopped by SIGINT/SIGTERM: how a worker is meant to stop'],
      [
        2,
        'usage or configuration error, CHATFERRY_FLEET_KEY missing, or no tenant it can serve (the fleet key opens no tenant’s stored key, none provisioned)',
      ],
    ],
    examples: [
      ['fleet worker', 'one more loader for every tenant of ./fleet.yaml that has work'],
      ['fleet worker --fleet /etc/chatferry/fleet.yaml --concurrency 2', 'two batches in flight per tenant'],
    ],
  })
  worker.action(async (opts: FleetFlags) => {
    const logger = createLogger()
    process.exitCode = await runStoppable(
      logger,
      'the batches in flight',
      async (stopper) => {
        const ctx = await openFleetLedger(opts.fleet, { keys: true, poolSize: 12 })
        try {
          const { jobs, unusable, deprovisioned } = await fleetTenantJobs(ctx.fleet, ctx.store, ctx.vault(), {
            only: opts.tenant ?? [],
            loadFlags: loadFlags(opts),
          })
          printLeftOut(deprovisionedNote(ctx.fleet, deprovisioned))
          const health = servedTenants(ctx.fleet.file, jobs, unusable)
          for (const u of unusable) {
            logger.warn({ tenant: u.tenantId }, `tenant ${u.tenantId} is not served: ${u.reason}`)
          }
          const endpoint = await startFleetMetricsEndpoint(ctx, opts.tenant ?? [], logger)
          try {
            logger.info({ tenants: jobs.length, ...health }, 'fleet worker serving')
            await serveFleet({
              store: ctx.store,
              tenants: jobs,
              logger,
              signal: stopper.signal,
              ...(endpoint ? { ticks: endpoint.metrics } : {}),
            })
          } finally {
            await endpoint?.stop()
          }
          return EXIT.OK
        } finally {
          await ctx.close()
        }
      },
      EXIT.OK,
    )
  })
}
