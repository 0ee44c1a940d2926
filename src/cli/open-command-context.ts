/**
 * What the ledger commands share before their work: read the configuration file, resolve the job
 * id and the loader settings (file, then environment, then flags), and open the job's ledger
 * (src/job/ledger-context.ts) — the embedded store under an exclusive lock file.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

import { ChatferryError, ConfigError } from '../errors.ts'
import { type LedgerContext, openLedgerContext } from '../job/ledger-context.ts'
import { markDeadRuns } from '../job/run-row.ts'
import { pidAlive } from '../lib.ts'
import { defaultJobId, leaseProblems, type LoadConfig, resolveLoadConfig } from '../load/config.ts'
import { loadConfig } from './load-config.ts'
import { readStatus } from './status-readings.ts'
import { serveStatusSocket, statusSocketPath } from './status-socket.ts'

export interface CommandContextOptions {
  readonly config?: string
  readonly job?: string
  readonly load?: Partial<Record<keyof LoadConfig, number>>
  /** The command uses neither the platform nor the source: their unset secrets are no error (`purge`). */
  readonly ledgerOnly?: boolean
}

/** The process holding an embedded store: its pid, its command, since when. */
export interface LockHolder {
  readonly pid: number
  readonly command: string
  readonly since: string
}

const lockFile = (dir: string) => join(dir, 'chatferry.lock')

/**
 * The live process holding the embedded store in `dir`, if any. The lock file's first line is the
 * pid (what older versions wrote alone); the second, JSON with the command and the start time.
 */
export function readLockHolder(dir: string): LockHolder | undefined {
  let text: string
  try {
    text = readFileSync(lockFile(dir), 'utf8')
  } catch {
    return undefined
  }
  const [first = '', second = ''] = text.split('\n')
  const pid = Number(first.trim())
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid || !pidAlive(pid)) {
    return undefined
  }
  let info: { command?: unknown; since?: unknown } = {}
  try {
    info = JSON.parse(second) as typeof info
  } catch {
    // a lock written by an older version: the pid only
  }
  return { pid, command: typeof info.command === 'string' ? info.command : 'unknown', since: typeof info.since === 'string' ? info.since : 'unknown' }
}

/** `pid 123 (chatferry run, since 2026-…)`, for messages. */
export function describeHolder(holder: LockHolder): string {
  return `pid ${holder.pid} (chatferry ${holder.command}, since ${holder.since})`
}

/**
 * The embedded store is one PGlite database in a directory: one process at a time. A lock file
 * with the holder's pid keeps a second process out (a stale lock of a dead process is taken over).
 */
export function lockEmbedded(dir: string): () => void {
  const file = lockFile(dir)
  const command = process.argv[2] ?? 'unknown'
  for (let i = 0; i < 2; i++) {
    try {
      writeFileSync(file, `${process.pid}\n${JSON.stringify({ command, since: new Date().toISOString() })}\n`, { flag: 'wx' })
      return () => rmSync(file, { force: true })
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') {
        throw err
      }
      const holder = readLockHolder(dir)
      if (holder) {
        throw new ChatferryError(
          'CHECKPOINT_CONFLICT',
          `another chatferry process, ${describeHolder(holder)}, is using the embedded store in ${dir}; ` +
            'the embedded store serves one process at a time — only `status` and `dashboard` read it meanwhile (through that process); ' +
            'for this command wait for it to finish, or set state.url (Postgres) to read while a job runs or to run several loaders or workers',
        )
      }
      rmSync(file, { force: true })
    }
  }
  throw new ChatferryError('CHECKPOINT_CONFLICT', `could not lock the embedded store in ${dir}`)
}

/**
 * Takes the embedded store in `dir` and opens it with `open`; while it is open, the `status` of
 * other processes is answered on its socket (src/cli/status-socket.ts).
 */
export async function holdEmbedded(dir: string, open: () => Promise<LedgerContext>): Promise<LedgerContext> {
  mkdirSync(dir, { recursive: true })
  const unlock = lockEmbedded(dir)
  let ctx: LedgerContext
  let stopServing: (() => Promise<void>) | undefined
  try {
    ctx = await open()
    stopServing = await serveStatusSocket((req) => readStatus(ctx.store, req), statusSocketPath(dir))
  } catch (err) {
    unlock()
    throw err
  }
  return {
    ...ctx,
    async close() {
      try {
        await stopServing?.()
        await ctx.close()
      } finally {
        unlock()
      }
    },
  }
}

/** Opens the ledger of the configured job. Throws ConfigError (exit 2) before any I/O on a bad config. */
export async function openCommandContext(options: CommandContextOptions): Promise<LedgerContext> {
  const config = loadConfig(options.config, process.env, { ledgerOnly: options.ledgerOnly ?? false })
  const fileJob = config.job
  const load = resolveLoadConfig(config.load, options.load ?? {}, process.env, config.file)
  const jobId = options.job ?? process.env.CHATFERRY_JOB_ID ?? fileJob?.id ?? defaultJobId(config.target.appId)
  // Flags can shorten the lease below what the file allowed: the same check as `config check`.
  const problems = leaseProblems(load.leaseSeconds, config.target.timeoutMs)
  if (problems.length > 0) {
    throw new ConfigError(config.file, problems)
  }
  const ctx =
    config.state.url !== undefined
      ? await openLedgerContext(config, { jobId, load })
      : await holdEmbedded(config.state.dir, () => openLedgerContext(config, { jobId, load }))
  try {
    // The next command that writes the ledger records the runs whose process died (run-liveness.ts).
    await markDeadRuns(ctx.store, jobId)
  } catch (err) {
    await ctx.close()
    throw err
  }
  return ctx
}
