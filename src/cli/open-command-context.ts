/**
 * What the ledger commands share before their work: read the configuration file, resolve the job
 * id and the loader settings (file, then environment, then flags), and open the job's ledger
 * (src/job/ledger-context.ts) — the embedded store under an exclusive lock file.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

import { ChatferryError, ConfigError } from '../errors.ts'
import { type LedgerContext, openLedgerContext } from '../job/ledger-context.ts'
import { pidAlive } from '../lib.ts'
import { defaultJobId, leaseProblems, type LoadConfig, resolveLoadConfig } from '../load/config.ts'
import { loadConfig } from './load-config.ts'

export interface CommandContextOptions {
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
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') {
        throw err
      }
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
export async function openCommandContext(options: CommandContextOptions): Promise<LedgerContext> {
  const config = loadConfig(options.config)
  const fileJob = config.job
  const load = resolveLoadConfig(config.load, options.load ?? {}, process.env, config.file)
  const jobId = options.job ?? process.env.CHATFERRY_JOB_ID ?? fileJob?.id ?? defaultJobId(config.target.appId)
  // Flags can shorten the lease below what the file allowed: the same check as `config check`.
  const problems = leaseProblems(load.leaseSeconds, config.target.timeoutMs)
  if (problems.length > 0) {
    throw new ConfigError(config.file, problems)
  }
  if (config.state.url !== undefined) {
    return openLedgerContext(config, { jobId, load })
  }
  mkdirSync(config.state.dir, { recursive: true })
  const unlock = lockEmbedded(config.state.dir)
  let ctx: LedgerContext
  try {
    ctx = await openLedgerContext(config, { jobId, load })
  } catch (err) {
    unlock()
    throw err
  }
  return {
    ...ctx,
    async close() {
      try {
        await ctx.close()
      } finally {
        unlock()
      }
    },
  }
}
