/**
 * A job's ledger, opened: the job's configuration, its id, the loader settings and the store (on
 * a Postgres server, or the embedded one in a directory). The commands
 * (src/cli/open-command-context.ts) read the configuration file, layer flags and environment on
 * it, and hold the embedded store's lock file around this.
 */
import { ConfigError } from '../errors.ts'
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
    config.state.url !== undefined ? await openLedgerServer(config, Math.max(10, load.concurrency + 6)) : await openLedger({ dir: config.state.dir })
  return {
    config,
    jobId,
    load,
    store,
    close: () => store.close(),
  }
}

/**
 * Opens the ledger on the Postgres server of `state.url`. A database that does not exist there is
 * a configuration error (exit 2) naming the command that creates it, not an outage to rerun.
 */
export async function openLedgerServer(config: Pick<ResolvedConfig, 'file' | 'state'>, poolSize: number): Promise<LedgerStore> {
  const url = config.state.url ?? ''
  try {
    return await openLedger({ url, poolSize })
  } catch (err) {
    // invalid_catalog_name: the server answered, the database is not there.
    if (pgCodeOf(err) === '3D000') {
      throw new ConfigError(config.file, [{ path: 'state.url', message: missingDatabase(url) }])
    }
    throw err
  }
}

/** The Postgres error code of an error or of one it was caused by (the migration wraps the driver's). */
function pgCodeOf(err: unknown): unknown {
  for (let e = err; e instanceof Error; e = e.cause) {
    if ('code' in e && typeof e.code === 'string') {
      return e.code
    }
  }
  return undefined
}

function missingDatabase(url: string): string {
  const u = new URL(url)
  const name = decodeURIComponent(u.pathname.replace(/^\//, ''))
  const args = [u.hostname && `-h ${u.hostname}`, u.port && `-p ${u.port}`, u.username && `-U ${decodeURIComponent(u.username)}`].filter(Boolean)
  return (
    `the ledger database "${name}" does not exist on ${u.hostname || 'the server'}${u.port ? `:${u.port}` : ''}: ` +
    `create it with \`createdb ${[...args, name].join(' ')}\` (or \`CREATE DATABASE "${name}"\` in psql); chatferry creates its tables on first use`
  )
}
