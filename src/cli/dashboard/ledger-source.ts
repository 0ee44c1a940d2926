/**
 * Where the dashboard reads the ledger on each refresh: the job's status readings
 * (src/cli/status-readings.ts). A Postgres ledger (`state.url`) is one pool opened for the
 * dashboard's lifetime: it serves many processes. An embedded store is one process's at a time,
 * and a dashboard left open must never keep a `run` from taking it: while a process holds it, each
 * refresh asks that process (its status socket, src/cli/status-socket.ts); when nobody holds it the
 * dashboard takes it for one reading (as `status` would) at its start and again each time a holder
 * has let it go (a run's end: the page then shows where the run left the job, even when the run
 * was over between two readings), and in between shows that reading, saying nobody is running.
 */
import type { ResolvedConfig } from '../../job/config.ts'
import { openLedger } from '../../state/store.ts'
import { readStatusFor } from '../ledger-read-context.ts'
import { describeHolder, readLockHolder } from '../open-command-context.ts'
import { readStatus, type StatusReadings, type StatusRequest } from '../status-readings.ts'
import { askStatus, statusSocketPath } from '../status-socket.ts'

export interface LedgerRead {
  readonly readings: StatusReadings
  /** How the ledger was reached, for the page. */
  readonly via: string
  /** The store was opened for this reading (nobody held it): its time is mostly the opening, not the ledger's work. */
  readonly opened?: boolean
}

export interface LedgerSource {
  /** This refresh's readings; undefined: nothing to read now (an embedded store nobody holds). */
  read(asks: Omit<StatusRequest, 'jobId'>): Promise<LedgerRead | undefined>
  close(): Promise<void>
}

export async function openLedgerSource(config: ResolvedConfig, configPath: string, jobId: string): Promise<LedgerSource> {
  if (config.state.url !== undefined) {
    const store = await openLedger({ url: config.state.url, poolSize: 2 })
    return {
      read: async (asks) => ({ readings: await readStatus(store, { jobId, ...asks }), via: 'Postgres ledger' }),
      close: () => store.close(),
    }
  }
  const dir = config.state.dir
  // Whether the store has been read since the last process that held it let it go (or since the start).
  let readSinceRelease = false
  return {
    async read(asks) {
      const holder = readLockHolder(dir)
      if (holder !== undefined) {
        readSinceRelease = false
        return { readings: await askStatus(statusSocketPath(dir), { jobId, ...asks }), via: `embedded store, through ${describeHolder(holder)}` }
      }
      if (readSinceRelease) {
        return undefined
      }
      // Nobody holds it: take it for this one reading, as `status` does, then let go.
      const read = await readStatusFor({ config: configPath, job: jobId }, asks)
      readSinceRelease = true
      return {
        readings: read.readings,
        opened: read.holder === undefined,
        via:
          read.holder !== undefined
            ? `embedded store, through ${describeHolder(read.holder)}`
            : 'embedded store, read once since no process holds it (the view refreshes while one does)',
      }
    },
    close: async () => {},
  }
}
