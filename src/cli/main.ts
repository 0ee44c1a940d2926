/**
 * The `chatferry` command line. Each command lives in `src/cli/commands/<name>.ts` and exports a
 * `register…Command(program)` function; program.ts wires them up, this file runs the program and
 * maps errors to exit codes.
 */
import { type Command, CommanderError } from 'commander'

import { ChatferryError, coerceError, ConfigError } from '../errors.ts'
import { CliError } from './cli-error.ts'
import { printErrorSummary, startSummary, SUMMARY_COMMANDS } from './command-summary.ts'
import { EXIT } from './exit-codes.ts'
import { callerDirectory } from './load-config.ts'
import { buildProgram } from './program.ts'
import { applyRuntimeV8Flags } from './runtime-v8-flags.ts'
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
  warnOfNpmBanner(argv)
  const program = buildProgram()
  try {
    await program.parseAsync(withoutHelpOfUnknownCommand(program, argv))
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

/**
 * `npm run chatferry -- … --json` prints npm's banner (`> chatferry@… chatferry`) on stdout before
 * the JSON, which a program reading it then fails to parse; `npm run -s` (loglevel silent) does
 * not. The banner is already out when this runs: say on stderr how to get clean output.
 */
function warnOfNpmBanner(argv: readonly string[]): void {
  const { npm_lifecycle_event: script, npm_package_name: pkg, npm_config_loglevel: loglevel } = process.env
  if (argv.includes('--json') && script === 'chatferry' && pkg === 'chatferry' && loglevel !== 'silent') {
    process.stderr.write(
      'chatferry: npm run printed its banner on stdout before this JSON; for output a program reads, run `npm run -s chatferry -- …` (or the installed `chatferry`)\n',
    )
  }
}

/**
 * `chatferry nosuch --help` (or `fleet nosuch --help`): commander would print the help of the
 * nearest known command and exit 0, so a script's typo looks like a success. Without the help flag
 * the unknown command fails as `chatferry nosuch` does: exit 2, with "Did you mean …?".
 */
function withoutHelpOfUnknownCommand(program: Command, argv: readonly string[]): string[] {
  const [node = '', script = '', ...args] = argv
  let command = program
  for (const arg of args) {
    if (command.commands.length === 0) {
      break
    }
    if (arg.startsWith('-')) {
      continue
    }
    const next = command.commands.find((c) => c.name() === arg || c.aliases().includes(arg))
    if (next === undefined) {
      return arg === 'help' ? [...argv] : [node, script, ...args.filter((a) => a !== '--help' && a !== '-h')]
    }
    command = next
  }
  return [...argv]
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

// The V8 flags read as the process runs (runtime-v8-flags.ts), set now that every module is loaded.
applyRuntimeV8Flags()
const code = await main()
// Servers (the sandbox) keep the event loop alive themselves; everything else exits here.
process.exitCode = code
