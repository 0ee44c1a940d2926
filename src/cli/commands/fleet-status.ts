/** `chatferry fleet status`: one line per tenant of the fleet, from the ledger (no key, no source). */
import type { Command } from 'commander'

import { deprovisionedNote } from '../../fleet/fleet-run-tenants.ts'
import { formatFleetStatus } from '../../fleet/fleet-status.ts'
import { openFleetLedger } from '../fleet-run-context.ts'
import { readFleetStatus } from '../fleet-status-read.ts'
import { withHelp } from '../help.ts'
import { addFleetOptions, type FleetFlags, printLeftOut } from './fleet.ts'

export function registerFleetStatusCommand(fleet: Command): void {
  const status = addFleetOptions(
    fleet
      .command('status')
      .summary('where every tenant stands, one line each')
      .description(
        'One line per tenant: its state (not provisioned, not started, planning, loading, done, rejected, failed, interrupted), done/remaining per entity, ' +
          "its rate in the last minute against its app's quota, the ETA at that quota, its rejects and its last error; then the fleet's totals. " +
          'Reads only the ledger: needs neither CHATFERRY_FLEET_KEY nor any source.',
      ),
  ).option(
    '--json',
    'print JSON: fleet, tenants[] (tenantId, jobId, appId, state, entities, done, remaining, rejected, rateVsQuota, etaSeconds, lastRun, lastError)',
  )
  withHelp(status, {
    exits: [
      [0, 'printed'],
      [1, 'the ledger could not be read'],
      [2, 'usage or configuration error (the fleet file)'],
    ],
    examples: [
      ['fleet status', 'every tenant of ./fleet.yaml'],
      ['fleet status --tenant acme --json', 'one tenant, as JSON'],
    ],
  })
  status.action(async (opts: FleetFlags) => {
    const ctx = await openFleetLedger(opts.fleet, { keys: false, poolSize: 4 })
    try {
      const { tenants: lines, deprovisioned } = await readFleetStatus(ctx.fleet, ctx.store, opts.tenant ?? [])
      printLeftOut(deprovisionedNote(ctx.fleet, deprovisioned))
      process.stdout.write(opts.json ? `${JSON.stringify({ fleet: ctx.fleet.id, tenants: lines }, null, 2)}\n` : `${formatFleetStatus(lines)}\n`)
    } finally {
      await ctx.close()
    }
  })
}
