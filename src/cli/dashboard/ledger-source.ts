/**
 * Where the dashboard reads the ledger on each refresh. A Postgres ledger (`state.url`) is one
 * pool opened for the dashboard's lifetime: it serves many processes. An embedded store is one
 * process's at a time, and a dashboard left open must never keep a `run` from taking it: it is
 * read through the process holding it (its socket, src/cli/ledger-read-socket.ts), reconnecting
 * when a new process takes it; when nobody holds it the dashboard takes it only for its first
 * reading (as `status` would), and afterwards shows that reading, saying nobody is running.
 */
import type { ResolvedConfig } from '../../job/config.ts'
import { openLedger } from '../../state/store.ts'
import { openReadContext } from '../ledger-read-context.ts'
import { connectReadSocket, type LedgerReader, readerOf, readSocketPath } from '../ledger-read-socket.ts'
import { describeHolder, readLockHolder } from '../open-command-context.ts'

export interface LedgerRead {
  readonly store: LedgerReader
  /** How the ledger was reached, for the page. */
  readonly via: string
  /** Lets go of the store after this reading (an embedded store taken for one reading). */
  readonly release?: () => Promise<void>
}

export interface LedgerSource {
  /** A reader for this refresh; undefined: nothing to read now (an embedded store nobody holds). */
  reader(): Promise<LedgerRead | undefined>
  /** The last reading failed: reconnect next time. */
  failed(): void
  close(): Promise<void>
}

export async function openLedgerSource(config: ResolvedConfig, configPath: string, job: string | undefined): Promise<LedgerSource> {
  if (config.state.url !== undefined) {
    const store = await openLedger({ url: config.state.url, poolSize: 2 })
    const reader = readerOf(store)
    return { reader: async () => ({ store: reader, via: 'Postgres ledger' }), failed: () => {}, close: () => store.close() }
  }
  const dir = config.state.dir
  let remote: { store: LedgerReader & { close(): void }; pid: number; via: string } | undefined
  let firstDone = false
  const drop = () => {
    remote?.store.close()
    remote = undefined
  }
  return {
    async reader() {
      const holder = readLockHolder(dir)
      if (holder !== undefined && holder.pid !== process.pid) {
        if (remote?.pid !== holder.pid) {
          drop()
          const store = await connectReadSocket(readSocketPath(dir))
          remote = { store, pid: holder.pid, via: `embedded store, through ${describeHolder(holder)}` }
        }
        return { store: remote.store, via: remote.via }
      }
      drop()
      if (firstDone) {
        return undefined
      }
      // Nobody holds it: take it for this one reading, as `status` does, then let go.
      const ctx = await openReadContext({ config: configPath, ...(job !== undefined ? { job } : {}) })
      firstDone = true
      return {
        store: ctx.store,
        via: 'embedded store, read once at start (no process holds it; the view refreshes while one does)',
        release: () => ctx.close(),
      }
    },
    failed: drop,
    close: async () => drop(),
  }
}
