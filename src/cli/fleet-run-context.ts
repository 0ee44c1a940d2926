/**
 * What the fleet's migration commands (commands/fleet-run.ts, fleet-status.ts, fleet-plan.ts) open:
 * the fleet file (read from the caller's directory, every problem listed before anything opens),
 * the key vault when the command sends to the tenants' apps (`CHATFERRY_FLEET_KEY`, refused
 * without it), and the shared Postgres ledger of `state.url`.
 */
import { type FleetFile, loadFleetFile } from '../fleet/fleet-file.ts'
import { type KeyVault, openKeyVault } from '../fleet/key-vault.ts'
import { type LedgerStore, openLedger } from '../state/store.ts'
import { resolveConfigPath } from './load-config.ts'

export interface FleetLedgerContext {
  readonly fleet: FleetFile
  readonly store: LedgerStore
  /** The key vault (only when opened with `keys`). */
  vault(): KeyVault
  close(): Promise<void>
}

/** Reads the fleet file, checks the fleet key when `keys`, then opens the fleet's ledger. */
export async function openFleetLedger(file: string, options: { keys: boolean; poolSize: number }): Promise<FleetLedgerContext> {
  // The fleet key first (as every fleet command: nothing read without it), then the fleet file.
  const vault = options.keys ? openKeyVault(process.env) : undefined
  // These commands send nothing to the management interface: its credentials need not be set.
  const fleet = await loadFleetFile(resolveConfigPath(file), process.env, { management: 'ignored' })
  const store = await openLedger({ url: fleet.stateUrl, poolSize: options.poolSize })
  return {
    fleet,
    store,
    vault() {
      if (vault === undefined) {
        throw new Error('this command opened the fleet without its key vault')
      }
      return vault
    },
    close: () => store.close(),
  }
}
