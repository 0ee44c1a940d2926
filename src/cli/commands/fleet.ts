/**
 * `chatferry fleet …`: tenant fleets (src/fleet). `provision` and `deprovision` are here; the
 * loading and watching subcommands (`run`, `worker`, `status`, `plan`, `verify`) are added by their
 * own modules, which share the options and flags here. The commands that open tenants' app keys (`provision`, `deprovision`, `run`,
 * `worker`, `verify`) need `CHATFERRY_FLEET_KEY` (the keys are sealed with it) and refuse to start
 * without it, before they read anything; `status` and `plan` read no key and do not need it.
 */
import { type Command, Option } from 'commander'

import { ConfigError } from '../../errors.ts'
import { deletionMeaning, deprovisionTenant } from '../../fleet/deprovision.ts'
import { type FleetFile, loadFleetFile } from '../../fleet/fleet-file.ts'
import { type KeyVault, openKeyVault } from '../../fleet/key-vault.ts'
import { fleetManagement } from '../../fleet/management-pacer.ts'
import { provisionFleet, type TenantOutcome } from '../../fleet/provision.ts'
import { type LedgerStore, openLedger } from '../../state/index.ts'
import type { ManagementClient } from '../../target/client.ts'
import { EXIT } from '../exit-codes.ts'
import { EXITS, withHelp } from '../help.ts'
import { resolveConfigPath } from '../load-config.ts'
import { jsonOption } from '../options.ts'

export const DEFAULT_FLEET_FILE = 'fleet.yaml'

export interface FleetOptions {
  fleet: string
  json?: boolean
}

/** `--fleet FILE` (`$CHATFERRY_FLEET`, default fleet.yaml), relative to the directory the command runs in. */
export function fleetOption(): Option {
  return new Option('-f, --fleet <file>', 'fleet file, relative to the directory the command is run in')
    .env('CHATFERRY_FLEET')
    .default(DEFAULT_FLEET_FILE)
}

/** The flags of the migration subcommands (`fleet-run.ts` and the modules it adds). */
export interface FleetFlags {
  fleet: string
  tenant?: string[]
  concurrency?: number
  leaseSeconds?: number
  json?: boolean
}

/** Prints the fleet's one line about the deprovisioned tenants it left out (stderr: stdout stays the command's answer). */
export function printLeftOut(note: string | undefined): void {
  if (note !== undefined) {
    process.stderr.write(`chatferry: ${note}\n`)
  }
}

/** The options the migration subcommands (`run`, `worker`, `status`, `plan`, `verify`, `dashboard`) share: the fleet file and the tenants. */
export function addFleetOptions(cmd: Command): Command {
  return cmd.addOption(fleetOption()).option('--tenant <id...>', 'only these tenants (repeatable; default: every tenant of the fleet file)')
}

/** What a fleet command works with. */
export interface FleetContext {
  readonly vault: KeyVault
  readonly fleet: FleetFile
  readonly store: LedgerStore
}

/**
 * Opens a fleet command's context in the order that refuses early: the fleet key (nothing read
 * without it), the fleet file (every problem at once, nothing opened), then the shared ledger.
 */
export async function openFleetContext(opts: FleetOptions, env: NodeJS.ProcessEnv = process.env): Promise<FleetContext> {
  const vault = openKeyVault(env)
  const fleet = await loadFleetFile(resolveConfigPath(opts.fleet, env), env)
  const store = await openLedger({ url: fleet.stateUrl })
  return { vault, fleet, store }
}

/** The fleet's management interface, paced and retried on the fleet's ledger (src/fleet/management-pacer.ts). */
async function managementOf(fleet: FleetFile, store: LedgerStore): Promise<ManagementClient> {
  if (fleet.management === undefined) {
    throw new ConfigError(fleet.file, [
      { path: 'management', message: 'is required to provision (url, key, secret: use ${VAR} for the key and secret)' },
    ])
  }
  return (await fleetManagement(fleet.management, store.quota)).client
}

function describeOutcome(o: TenantOutcome): string {
  const app = o.appId ? `app ${o.appId} (${o.region})` : `no app (${o.region})`
  if (o.note) {
    return `${o.tenantId}  ${app}  ${o.note}`
  }
  if (o.error) {
    return `${o.tenantId}  ${app}  FAILED${o.needsFix ? ' (needs a fix)' : ''}: ${o.error}`
  }
  const s = o.setup
  const did = s ? `; extensions +${s.extensions}, team +${s.team}, webhooks +${s.webhooks}` : ''
  return `${o.tenantId}  ${app}  ${o.state} (app ${o.app ?? 'kept'}${did})`
}

/** 0: every tenant provisioned (or deprovisioned, left alone); 2: one needs a fix; 1: one failed in a way a rerun may fix. */
export function provisionExitCode(outcomes: readonly TenantOutcome[]): number {
  const failed = outcomes.filter((o) => o.error !== undefined)
  if (failed.some((o) => o.needsFix)) {
    return EXIT.USAGE
  }
  return failed.length > 0 ? EXIT.ERROR : EXIT.OK
}

function registerProvision(fleet: Command): void {
  withHelp(fleet.command('provision'), {
    exits: [
      [0, 'every tenant has its app, extensions, team and webhooks'],
      [1, 'a tenant failed in a way running again may fix (a network error, a 5xx); the others were provisioned'],
      [
        2,
        'a tenant needs a fix (the platform refused it, its app name is taken, …), or the fleet file, the fleet key or the management credentials are wrong',
      ],
    ],
    examples: [
      ['fleet provision', 'every tenant of fleet.yaml'],
      ['fleet provision --tenant acme --tenant globex --json', 'two tenants; the outcome as JSON'],
    ],
  })
    .description(
      "Create each tenant's app through the management interface (found again by name if a crashed run created it), seal its key in the ledger, enable its extensions, add its team members, configure its webhooks. Idempotent.",
    )
    .addOption(fleetOption())
    .option('--tenant <id...>', 'only these tenants')
    .addOption(jsonOption('print the outcome of each tenant as JSON'))
    .action(async (opts: FleetOptions & { tenant?: string[] }) => {
      const ctx = await openFleetContext(opts)
      try {
        const mgmt = await managementOf(ctx.fleet, ctx.store)
        const outcomes = await provisionFleet({
          fleet: ctx.fleet,
          store: ctx.store,
          mgmt,
          vault: ctx.vault,
          ...(opts.tenant ? { tenants: opts.tenant } : {}),
          onTenant: opts.json ? undefined : (o) => process.stdout.write(`${describeOutcome(o)}\n`),
        })
        if (opts.json) {
          process.stdout.write(`${JSON.stringify({ fleet: ctx.fleet.id, tenants: outcomes })}\n`)
        }
        process.exitCode = provisionExitCode(outcomes)
      } finally {
        await ctx.store.close()
      }
    })
}

function registerDeprovision(fleet: Command): void {
  withHelp(fleet.command('deprovision'), {
    exits: [
      [0, 'the app was deleted (or already was)'],
      EXITS.error,
      [
        2,
        'no --yes, an unknown tenant or one without an app, a fleet key that does not open the tenant’s stored key (nothing deleted), a paid app the platform keeps, or a configuration problem',
      ],
    ],
    examples: [['fleet deprovision --tenant acme --yes', "delete acme's app (archived at once, removed for good after 30 days)"]],
  })
    .description("Delete a tenant's app through the management interface, and say what that means on the platform.")
    .addOption(fleetOption())
    .requiredOption('--tenant <id>', 'the tenant whose app to delete')
    .option('--yes', 'confirm: the deletion cannot be undone')
    .addOption(jsonOption('print the outcome as JSON'))
    .action(async (opts: FleetOptions & { tenant: string; yes?: boolean }) => {
      if (!opts.yes) {
        throw new ConfigError('command line', [
          {
            path: '--yes',
            message: `is required: deleting tenant ${opts.tenant}'s app cannot be undone (the platform archives it at once and deletes it after 30 days)`,
          },
        ])
      }
      const ctx = await openFleetContext(opts)
      try {
        const outcome = await deprovisionTenant(ctx.fleet, ctx.store, await managementOf(ctx.fleet, ctx.store), ctx.vault, opts.tenant)
        if (opts.json) {
          process.stdout.write(`${JSON.stringify({ ...outcome, meaning: deletionMeaning(outcome) })}\n`)
        } else {
          process.stdout.write(`tenant ${outcome.tenantId}: app ${outcome.appId} ${outcome.how}\n${deletionMeaning(outcome)}\n`)
        }
      } finally {
        await ctx.store.close()
      }
    })
}

/** `chatferry fleet`: the command group; provision/deprovision here. */
export function registerFleetCommand(program: Command): Command {
  const fleet = program.command('fleet').description('tenant fleets: one app per tenant, provisioned and migrated together (fleet.yaml)')
  withHelp(fleet, {
    examples: [
      ['fleet provision', 'create and set up every tenant’s app'],
      ['fleet deprovision --tenant acme --yes', "delete one tenant's app"],
    ],
  })
  registerProvision(fleet)
  registerDeprovision(fleet)
  return fleet
}
