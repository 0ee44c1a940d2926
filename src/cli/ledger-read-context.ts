/**
 * How the commands that only read the ledger reach it. They never need the API key or the
 * source's password (the configuration is read with `ledgerOnly`).
 *
 * - a Postgres ledger (`state.url`) is opened as usual: it serves many processes at once, so every
 *   read-only command works while jobs run;
 * - an embedded store nobody holds is taken, like any command takes it, for the time of the read;
 * - an embedded store a live process holds (its lock file names it) is that process's alone: a
 *   second PGlite on the same directory would corrupt it. Only `status` (and the dashboard) read
 *   it meanwhile, through the holder ({@link readStatusFor}, status-socket.ts); `rejects`, `runs`
 *   and `files` are refused naming the holder, like the commands that write.
 */
import { ChatferryError } from '../errors.ts'
import type { ResolvedConfig } from '../job/config.ts'
import { openLedgerContext, openLedgerServer } from '../job/ledger-context.ts'
import { defaultJobId, resolveLoadConfig } from '../load/config.ts'
import type { LedgerStore } from '../state/store.ts'
import { loadConfig } from './load-config.ts'
import { holdEmbedded, type LockHolder, readLockHolder } from './open-command-context.ts'
import { readStatus, type StatusReadings, type StatusRequest } from './status-readings.ts'
import { askStatus, statusSocketPath } from './status-socket.ts'

export interface ReadContext {
  readonly config: ResolvedConfig
  readonly jobId: string
  readonly store: LedgerStore
  close(): Promise<void>
}

export interface ReadContextOptions {
  readonly config?: string
  readonly job?: string
}

/** How long to wait for a holder that is still starting (opening the store) to listen. */
const CONNECT_WAIT_MS = 15_000

function readConfig(options: ReadContextOptions): { config: ResolvedConfig; jobId: string } {
  const config = loadConfig(options.config, process.env, { ledgerOnly: true })
  return { config, jobId: options.job ?? process.env.CHATFERRY_JOB_ID ?? config.job?.id ?? defaultJobId(config.target.appId) }
}

/** Opens the ledger (Postgres), or takes the embedded store: refused while another process holds it. */
async function openStore(config: ResolvedConfig, jobId: string): Promise<{ store: LedgerStore; close(): Promise<void> }> {
  if (config.state.url !== undefined) {
    const store = await openLedgerServer(config, 2)
    return { store, close: () => store.close() }
  }
  const load = resolveLoadConfig(config.load, {}, process.env, config.file)
  return holdEmbedded(config.state.dir, () => openLedgerContext(config, { jobId, load }))
}

/** The ledger of `rejects`, `runs` and `files`. */
export async function openReadContext(options: ReadContextOptions): Promise<ReadContext> {
  const { config, jobId } = readConfig(options)
  const opened = await openStore(config, jobId)
  return { config, jobId, store: opened.store, close: () => opened.close() }
}

export interface StatusRead {
  readonly config: ResolvedConfig
  readonly jobId: string
  readonly readings: StatusReadings
  /** The live process that read them, when another process holds the embedded store. */
  readonly holder?: LockHolder
}

/**
 * The job's status readings: from the ledger itself, or, while a live process holds the embedded
 * store, from that process. A holder still starting gets {@link CONNECT_WAIT_MS} to listen; a
 * process that takes the store between the look and the lock is asked instead.
 */
export async function readStatusFor(options: ReadContextOptions, asks: Omit<StatusRequest, 'jobId'>): Promise<StatusRead> {
  const { config, jobId } = readConfig(options)
  const req = { jobId, ...asks }
  const deadline = Date.now() + CONNECT_WAIT_MS
  for (;;) {
    const holder = config.state.url === undefined ? readLockHolder(config.state.dir) : undefined
    if (holder !== undefined) {
      const path = statusSocketPath(config.state.dir)
      try {
        return { config, jobId, readings: await askStatus(path, req), holder }
      } catch (err) {
        if (Date.now() > deadline) {
          throw new ChatferryError(
            'CHECKPOINT_CONFLICT',
            `the embedded store in ${config.state.dir} is held by pid ${holder.pid} (chatferry ${holder.command}, since ${holder.since}), ` +
              `which does not answer status on ${path}: ${(err as Error).message}`,
          )
        }
        await new Promise((r) => setTimeout(r, 200))
        continue
      }
    }
    let opened
    try {
      opened = await openStore(config, jobId)
    } catch (err) {
      // Another process took the store between the look and the lock: ask it.
      if (err instanceof ChatferryError && err.code === 'CHECKPOINT_CONFLICT' && Date.now() < deadline) {
        continue
      }
      throw err
    }
    try {
      return { config, jobId, readings: await readStatus(opened.store, req) }
    } finally {
      await opened.close()
    }
  }
}
