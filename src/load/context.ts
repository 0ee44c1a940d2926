/**
 * What the ledger commands share: read the configuration, resolve the job id and the loader
 * settings, and open the ledger (on a server, or the embedded store under an exclusive lock).
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { loadConfig } from '../cli/load-config.ts'
import type { ResolvedConfig } from '../job/config.ts'
import { ChatferryError, ConfigError } from '../errors.ts'
import { pidAlive } from '../lib.ts'
import { openLedger, type LedgerStore } from '../state/store.ts'
import { defaultJobId, leaseProblems, resolveLoadConfig, type LoadConfig } from './config.ts'

export interface LedgerContext {
  readonly config: ResolvedConfig
  readonly jobId: string
  readonly load: LoadConfig
  readonly store: LedgerStore
  close(): Promise<void>
}

export interface LedgerContextOptions {
  readonly config?: string
  readonly job?: string
  readonly load?: Partial<Record<keyof LoadConfig, number>>
}


/**
 * The embedded store is one PGlite database in a directory: one process at a time. A lock file
 * with the holder's pid keeps a second process out (a stale lock of a dead process is taken over).
 */
function lockEmbedded(dir: string): () => void {
  const file = join(dir, 'chatferry.lock')
  for (let i = 0; i < 2; i++) {
    try {
      writeFileSync(file, String(process.pid), { flag: 'wx' })
      return () => rmSync(file, { force: true })
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
      const holder = Number(readFileSync(file, 'utf8').trim())
      if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && pidAlive(holder)) {
        throw new ChatferryError(
          'CHECKPOINT_CONFLICT',
          `another chatferry process (pid ${holder}) is using the embedded store in ${dir}; ` +
            'the embedded store serves one process at a time — wait for it, or set state.url (Postgres) to run several loaders or workers',
        )
      }
      rmSync(file, { force: true })
    }
  }
  throw new ChatferryError('CHECKPOINT_CONFLICT', `could not lock the embedded store in ${dir}`)
}

/** Opens the ledger of the configured job. Throws ConfigError (exit 2) before any I/O on a bad config. */
export async function openLedgerContext(options: LedgerContextOptions): Promise<LedgerContext> {
  const config = loadConfig(options.config)
  const fileJob = config.job
  const load = resolveLoadConfig(config.load, options.load ?? {}, process.env, config.file)
  const jobId = options.job ?? process.env.CHATFERRY_JOB_ID ?? fileJob?.id ?? defaultJobId(config.target.appId)
  // Flags can shorten the lease below what the file allowed: the same check as `config check`.
  const problems = leaseProblems(load.leaseSeconds, config.target.timeoutMs)
  if (problems.length > 0) throw new ConfigError(config.file, problems)
  let unlock = () => {}
  let store: LedgerStore
  if (config.state.url !== undefined) {
    store = await openLedger({ url: config.state.url, poolSize: Math.max(10, load.concurrency + 6) })
  } else {
    const { mkdirSync } = await import('node:fs')
    mkdirSync(config.state.dir, { recursive: true })
    unlock = lockEmbedded(config.state.dir)
    try {
      store = await openLedger({ dir: config.state.dir })
    } catch (err) {
      unlock()
      throw err
    }
  }
  return {
    config,
    jobId,
    load,
    store,
    async close() {
      try {
        await store.close()
      } finally {
        unlock()
      }
    },
  }
}
