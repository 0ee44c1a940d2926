/**
 * A job's ledger, opened: the job's configuration, its id, the loader settings and the store (on
 * a Postgres server, or the embedded one in a directory). The commands
 * (src/cli/open-command-context.ts) read the configuration file, layer flags and environment on
 * it, and hold the embedded store's lock file around this.
 */
import type { LoadConfig } from '../load/config.ts'
import { type LedgerStore, openLedger } from '../state/store.ts'
import type { ResolvedConfig } from './config.ts'

export interface LedgerContext {
  readonly config: ResolvedConfig
  readonly jobId: string
  readonly load: LoadConfig
  readonly store: LedgerStore
  close(): Promise<void>
}

/** Which job of the ledger, and the loader settings resolved from the file, the environment and flags. */
export interface LedgerSettings {
  readonly jobId: string
  readonly load: LoadConfig
}

/** Opens the ledger the configuration names (`state.url`, else the embedded store in `state.dir`). */
export async function openLedgerContext(config: ResolvedConfig, settings: LedgerSettings): Promise<LedgerContext> {
  const { jobId, load } = settings
  const store =
    config.state.url !== undefined
      ? await openLedger({ url: config.state.url, poolSize: Math.max(10, load.concurrency + 6) })
      : await openLedger({ dir: config.state.dir })
  return {
    config,
    jobId,
    load,
    store,
    close: () => store.close(),
  }
}
