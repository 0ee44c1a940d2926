/**
 * The `chatferry` command line. Each command lives in `src/cli/commands/<name>.ts` and exports a
 * `register…Command(program)` function; program.ts wires them up, this file runs the program and
 * maps errors to exit codes.
 */
import { CommanderError } from 'commander'

import { ChatferryError, coerceError, ConfigError } from '../errors.ts'
import { CliError } from './cli-error.ts'
import { printErrorSummary, startSummary, SUMMARY_COMMANDS } from './command-summary.ts'
import { EXIT } from './exit-codes.ts'
import { callerDirectory } from './load-config.ts'
import { buildProgram } from './program.ts'
import { exitQuietlyWithoutReader } from './signals.ts'
import { UsageError } from './usage-error.ts'

/** `scheme://user:password@` → `scheme://user:***@` anywhere in a text. */
function withoutUrlPasswords(text: string): string {
  return text.replace(/(\b[a-z][a-z0-9+.-]*:\/\/[^:/@\s]*):[^@\s/]*@/gi, '$1:***@')
}

export { buildProgram }

export async function main(argv: readonly string[] = process.argv): Promise<number> {
  // `npm run chatferry -- …` runs in the package root: work in the caller's directory instead, so
  // relative paths (--config, --out, --dir, state.dir) mean what they mean in the caller's shell.
  const caller = callerDirectory()
  if (caller !== process.cwd()) {
    process.chdir(caller)
  }
  exitQuietlyWithoutReader()
  const program = buildProgram()
  try {
    await program.parseAsync([...argv])
    return typeof process.exitCode === 'number' ? process.exitCode : EXIT.OK
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version end here too, with exit code 0.
      if (err.exitCode === 0) {
        return EXIT.OK
      }
      // A usage error of a summarising command asked for --json: its one object still comes.
      const command = argv.slice(2).find((a) => !a.startsWith('-'))
      if (command !== undefined && SUMMARY_COMMANDS.includes(command) && argv.includes('--json')) {
        startSummary(command, true)
        printErrorSummary(EXIT.USAGE, err.message.replace(/^error: /, ''))
      }
      return EXIT.USAGE
    }
    const { code, message } = describeFailure(err)
    process.stderr.write(`chatferry: ${message}\n`)
    if (process.env.CHATFERRY_DEBUG) {
      process.stderr.write(`${coerceError(err).stack ?? ''}\n`)
    }
    printErrorSummary(code, message)
    return code
  }
}

/** The exit code of an error that ended a command, and its message (no URL password). */
function describeFailure(err: unknown): { code: number; message: string } {
  if (err instanceof CliError) {
    return { code: err.exitCode, message: withoutUrlPasswords(err.message) }
  }
  if (err instanceof UsageError) {
    return { code: EXIT.USAGE, message: err.problems.map((p) => p.message).join('; ') }
  }
  if (err instanceof ConfigError) {
    return { code: EXIT.USAGE, message: err.message }
  }
  // Configuration problems found once the source is open (e.g. a generic-sql query that lacks a
  // required column) are usage errors too: nothing was read. So is a source that refuses the
  // query or the login as configured (a missing table or column, bad credentials): a rerun
  // cannot fix it.
  // So is a delta on a job whose full read never completed: it needs `chatferry run` first.
  if (err instanceof ChatferryError && (err.code === 'CONFIG_INVALID' || err.code === 'SOURCE_INVALID' || err.code === 'DELTA_BEFORE_FULL_READ')) {
    const fix = err.code === 'SOURCE_INVALID' ? '\n  fix source (url, credentials, entities.*.query) or the source database, then run again' : ''
    return { code: EXIT.USAGE, message: `${withoutUrlPasswords(err.message)} [${err.code}]${fix}` }
  }
  const e = coerceError(err)
  const tag = e instanceof ChatferryError ? ` [${e.code}]` : ''
  // Whatever a driver put in its message, a URL's password never reaches the terminal.
  return { code: EXIT.ERROR, message: `${withoutUrlPasswords(e.message)}${tag}` }
}

const code = await main()
// Servers (the sandbox) keep the event loop alive themselves; everything else exits here.
process.exitCode = code
