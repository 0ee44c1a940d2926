/**
 * How the commands that only read the ledger (`status`, `rejects`, `runs`) reach it. They never
 * need the API key or the source's password (the configuration is read with `ledgerOnly`), and
 * they work while another process runs a job:
 *
 * - a Postgres ledger (`state.url`) is opened as usual: it serves many processes at once;
 * - an embedded store held by a live process (its lock file names it) is read through that
 *   process, on its socket (src/cli/ledger-read-socket.ts): a second PGlite on the same directory
 *   would corrupt it;
 * - an embedded store nobody holds is taken, like any command takes it, for the time of the read.
 */
import { ChatferryError } from '../errors.ts'
import type { ResolvedConfig } from '../job/config.ts'
import { openLedgerContext, openLedgerServer } from '../job/ledger-context.ts'
import { defaultJobId, resolveLoadConfig } from '../load/config.ts'
import { connectReadSocket, type LedgerAnswers, type LedgerReader, readerOf, readSocketPath } from './ledger-read-socket.ts'
import { loadConfig } from './load-config.ts'
import { holdEmbedded, type LockHolder, readLockHolder } from './open-command-context.ts'

export interface ReadContext {
  readonly config: ResolvedConfig
  readonly jobId: string
  /** The ledger's read-only operations, local or through the holder's socket. */
  readonly store: LedgerReader
  /** The live process whose store this is read through, when another process holds it. */
  readonly holder?: LockHolder
  close(): Promise<void>
}

export interface ReadContextOptions {
  readonly config?: string
  readonly job?: string
}

/** How long to wait for a holder that is still starting (opening the store) to listen. */
const CONNECT_WAIT_MS = 15_000

export async function openReadContext(options: ReadContextOptions): Promise<ReadContext> {
  const config = loadConfig(options.config, process.env, { ledgerOnly: true })
  const jobId = options.job ?? process.env.CHATFERRY_JOB_ID ?? config.job?.id ?? defaultJobId(config.target.appId)
  if (config.state.url !== undefined) {
    const store = await openLedgerServer(config, 2)
    return { config, jobId, store: readerOf(store), close: () => store.close() }
  }
  return reachEmbedded<ReadContext>(config.state.dir, {
    throughHolder: (remote, holder) => ({ config, jobId, store: remote, holder, close: async () => remote.close() }),
    takeIt: async () => {
      const load = resolveLoadConfig(config.load, {}, process.env, config.file)
      const ctx = await holdEmbedded(config.state.dir, () => openLedgerContext(config, { jobId, load }))
      return { config, jobId, store: readerOf(ctx.store), close: () => ctx.close() }
    },
  })
}

/**
 * Reaches the embedded store in `dir` for a command that does not need it to itself: through the
 * live process holding it (its socket), else by taking it (`takeIt`, which holds the lock). A
 * holder still starting gets {@link CONNECT_WAIT_MS} to listen; a process that takes the store
 * between the look and the lock is asked instead.
 */
export async function reachEmbedded<T>(
  dir: string,
  ways: {
    throughHolder: (remote: LedgerAnswers & { close(): void }, holder: LockHolder) => T
    takeIt: () => Promise<T>
  },
): Promise<T> {
  const deadline = Date.now() + CONNECT_WAIT_MS
  for (;;) {
    const holder = readLockHolder(dir)
    if (holder) {
      try {
        return ways.throughHolder(await connectReadSocket(readSocketPath(dir)), holder)
      } catch (err) {
        if (Date.now() > deadline) {
          throw new ChatferryError(
            'CHECKPOINT_CONFLICT',
            `the embedded store in ${dir} is held by pid ${holder.pid} (chatferry ${holder.command}, since ${holder.since}), ` +
              `which does not answer read-only queries on ${readSocketPath(dir)}: ${(err as Error).message}`,
          )
        }
        await new Promise((r) => setTimeout(r, 200))
        continue
      }
    }
    try {
      return await ways.takeIt()
    } catch (err) {
      // Another process took the store between the look and the lock: read through it.
      if (err instanceof ChatferryError && err.code === 'CHECKPOINT_CONFLICT' && Date.now() < deadline) {
        continue
      }
      throw err
    }
  }
}
