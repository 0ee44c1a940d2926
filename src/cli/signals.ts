/**
 * SIGINT/SIGTERM for every long command (`run`, `load`, `plan`, `worker`, `verify`), wired in
 * this one place. The first signal stops new work and lets the work in hand finish (the page being
 * planned, the batches in flight), saying so in a log line; the command then marks its run row
 * `interrupted` and exits 1, and the same command resumes. A second signal quits at once (exit 1):
 * the ledger is built for that, since at most the in-flight requests are sent again; before it
 * exits, it gives the command's quit hooks (marking its run row `interrupted`) up to
 * {@link QUIT_GRACE_MS} to land, so the row never says `running` for a process that is gone.
 *
 * A reader of our output that went away (its pipe closed: the scheduler or `npm run` killed) never
 * crashes the stop: from the moment the handlers are installed, a failed write to stdout or stderr
 * is dropped instead of ending the process with an unhandled EPIPE before its run row is written.
 */
import { readFileSync } from 'node:fs'

import type { Logger } from 'pino'

import { pidAlive } from '../lib.ts'
import { EXIT } from './exit-codes.ts'

/** The first signal of a command: what stopped it. */
export class StopRequested extends Error {
  readonly signal: NodeJS.Signals
  constructor(signal: NodeJS.Signals) {
    super(`stopped by ${signal}`)
    this.name = 'StopRequested'
    this.signal = signal
  }
}

export interface Stopper {
  /** Aborts on the first signal; hand it to the planner, the loader, the verifier. */
  readonly signal: AbortSignal
  /** What a first signal lets finish, as its log line names it; commands update it per phase. */
  finishing: string
  /**
   * Registers what a second signal still does before the process quits (record the run row as
   * `interrupted`); each hook gets at most {@link QUIT_GRACE_MS}, together. Returns its removal.
   */
  onQuit(hook: () => Promise<unknown>): () => void
  /** Removes the handlers (the command is over). */
  dispose(): void
}

/** How long a second signal waits for the quit hooks (the run row's last write) before exiting. */
export const QUIT_GRACE_MS = 3000

/**
 * Until a long command installs its signal handlers: a reader of stdout that went away (`chatferry
 * --help | head`) ends the process quietly with exit 0, as `git` or `ls` do, instead of an
 * unhandled EPIPE stack trace. Installed once by main; {@link stopOnSignals} replaces it.
 */
export function exitQuietlyWithoutReader(): void {
  if (!process.stdout.listeners('error').includes(quietExit)) {
    process.stdout.on('error', quietExit)
  }
}

function quietExit(err: NodeJS.ErrnoException): void {
  if (err.code === 'EPIPE') {
    process.exit(EXIT.OK)
  }
  throw err
}

/** Drops write errors on stdout/stderr (EPIPE once the reader is gone) instead of crashing; once. */
function keepWritingWithoutReader(): void {
  process.stdout.off('error', quietExit)
  for (const stream of [process.stdout, process.stderr]) {
    if (!stream.listeners('error').includes(dropOutputError)) {
      stream.on('error', dropOutputError)
    }
  }
}

function dropOutputError(): void {}

/** Runs the hooks, waiting at most `ms` for them together; never throws. */
async function runQuitHooks(hooks: Iterable<() => Promise<unknown>>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  const grace = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms)
  })
  const all = Promise.allSettled([...hooks].map(async (hook) => hook()))
  await Promise.race([all, grace])
  clearTimeout(timer)
}

const SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM']

/** Installs the handlers; `finishing` names the work in hand for the first signal's log line. */
export function stopOnSignals(logger: Logger, finishing: string): Stopper {
  const controller = new AbortController()
  const quitHooks = new Set<() => Promise<unknown>>()
  let quitting = false
  keepWritingWithoutReader()
  const stopper: Stopper = {
    signal: controller.signal,
    finishing,
    onQuit: (hook) => {
      quitHooks.add(hook)
      return () => quitHooks.delete(hook)
    },
    dispose: () => {
      stopWatching()
      for (const s of SIGNALS) {
        process.off(s, onSignal)
      }
    },
  }
  const stopWatching = watchParent((why) => {
    logger.warn({ why }, `${why}: nobody is waiting for this process any more; treating it as SIGTERM`)
    onSignal('SIGTERM')
  })
  function onSignal(signal: NodeJS.Signals): void {
    if (quitting) {
      process.exit(EXIT.ERROR)
    }
    if (controller.signal.aborted) {
      quitting = true
      logger.error({ signal }, `${signal} again: quitting at once; run the same command again to resume`)
      void runQuitHooks(quitHooks, QUIT_GRACE_MS).finally(() => process.exit(EXIT.ERROR))
      return
    }
    logger.warn({ signal }, `${signal}: stopping; finishing ${stopper.finishing} (send the signal again to quit at once)`)
    controller.abort(new StopRequested(signal))
  }
  for (const s of SIGNALS) {
    process.on(s, onSignal)
  }
  return stopper
}

/** How often the parent process is checked. */
const PARENT_CHECK_MS = 1000

/** The parent pid of `pid` (Linux: /proc/<pid>/stat), if it can be read. */
function parentOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // pid (comm) state ppid …: comm may hold spaces and parentheses, so read after the last ')'.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
    return Number.isInteger(ppid) && ppid > 0 ? ppid : undefined
  } catch {
    return undefined
  }
}

/**
 * Calls `onOrphaned` once when the process that started this one goes away: its parent pid
 * changes (re-parented to init or a subreaper when the parent died, e.g. npm SIGTERMed), or,
 * under `npm run chatferry`, where npm starts the script through `sh -c`, npm itself (the
 * shell's parent) dies while the shell lives on (npm SIGKILLed). Without this, a scheduler that
 * kills its `npm run …` would leave the loader running on, unseen. Returns the stop function.
 */
export function watchParent(onOrphaned: (why: string) => void): () => void {
  const parent = process.ppid
  // npm → sh -c → node: watch npm too. Only under npm (npm_lifecycle_event) and only if the
  // grandparent is not init: the shell of a plain terminal is never init's child here.
  const grandparent = process.env.npm_lifecycle_event !== undefined ? parentOf(parent) : undefined
  const watched = grandparent !== undefined && grandparent > 1 ? grandparent : undefined
  let fired = false
  const timer = setInterval(() => {
    if (fired) {
      return
    }
    let why: string | undefined
    if (process.ppid !== parent) {
      why = `the parent process ${parent} is gone (re-parented to ${process.ppid})`
    } else if (watched !== undefined && (!pidAlive(watched) || parentOf(parent) !== watched)) {
      why = `npm (pid ${watched}) is gone`
    }
    if (why === undefined) {
      return
    }
    fired = true
    onOrphaned(why)
  }, PARENT_CHECK_MS)
  timer.unref()
  return () => clearInterval(timer)
}

/** The signal that stopped a command, if one did. */
export function stoppedBy(stopper: Stopper): NodeJS.Signals | undefined {
  const reason: unknown = stopper.signal.reason
  return stopper.signal.aborted && reason instanceof StopRequested ? reason.signal : undefined
}

/**
 * Runs a command's work with signals wired. When a signal stopped it (whether the work returned
 * or threw an abort error on the way out), logs that and returns `stoppedCode` (exit 1: rerun to
 * resume); otherwise returns the work's code or rethrows its error.
 */
export async function runStoppable(
  logger: Logger,
  finishing: string,
  work: (stopper: Stopper) => Promise<number>,
  stoppedCode: number = EXIT.ERROR,
): Promise<number> {
  const stopper = stopOnSignals(logger, finishing)
  let code: number
  try {
    code = await work(stopper)
  } catch (err) {
    if (stoppedBy(stopper) === undefined) {
      throw err
    }
    code = stoppedCode
  } finally {
    stopper.dispose()
  }
  const signal = stoppedBy(stopper)
  if (signal === undefined) {
    return code
  }
  logger.warn({ signal }, `stopped by ${signal}${stoppedCode === EXIT.OK ? '' : '; run the same command again to resume'}`)
  return stoppedCode
}
