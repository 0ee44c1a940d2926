/**
 * The `chatferry` commander program: every command of `src/cli/commands/`, the top-level help
 * (the exit codes every command shares, a first few examples) and one style for defaults.
 * main.ts runs it; the completion script and the help test read it.
 */
import { Command, Option } from 'commander'

import { LOG_FORMATS, type LogFormat, setLogFormat } from '../logger.ts'
import { VERSION } from '../version.ts'
import { COMMANDS } from './commands/index.ts'
import { EXIT } from './exit-codes.ts'
import { unquoteDefaults, withHelp } from './help.ts'

export function buildProgram(): Command {
  const program = new Command()
    .name('chatferry')
    .description(
      "Move a legacy chat system's history into a hosted chat platform through its data-import interface: " +
        'resumably, at the platform quota, with a per-item ledger. From a checkout: npm run chatferry -- <command>.',
    )
    .version(VERSION, '-V, --version')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
  for (const register of COMMANDS) {
    register(program)
  }
  withHelp(program, {
    exits: [
      [EXIT.OK, 'every item done, or skipped by policy (plan, verify: every check passed)'],
      [EXIT.ERROR, 'stopped by an outage (source or platform) or by SIGINT/SIGTERM: run the same command again, it resumes'],
      [
        EXIT.USAGE,
        'nothing a rerun can fix: usage or configuration error, unknown job, nothing planned, the platform refused the API key, the source refused a query or login (missing table or column)',
      ],
      [EXIT.REJECTED, 'finished, some items rejected (plan: a --fail-on gate or the pre-flight; verify: unexplained mismatches)'],
      [
        EXIT.SOURCE_CHANGING,
        'run --delta --final finished, but the source changed after its read began: freeze the legacy system and run the final delta again',
      ],
    ],
    examples: [
      ['demo', 'a complete demo migration on embedded defaults'],
      ['config check -c chatferry.yaml', 'validate the configuration file, no I/O'],
      ['plan --check-target', 'the dry run: what a run would do, nothing sent'],
      ['run --json', 'migrate (extract, plan, load); one JSON summary on stdout for a scheduler'],
      ['status', 'where the job stands, per entity'],
    ],
  })
  withLogFormat(program)
  program.hook('preAction', (_program, action) => {
    setLogFormat(action.opts<{ logFormat?: LogFormat }>().logFormat)
  })
  unquoteDefaults(program)
  return program
}

/** `--log-format` on every command that runs something (the leaves), spelled the same everywhere. */
function withLogFormat(command: Command): void {
  if (command.commands.length === 0) {
    command.addOption(
      new Option('--log-format <format>', 'log lines: pretty (human) or json (default: pretty on a terminal, else json)')
        .choices(LOG_FORMATS)
        .env('CHATFERRY_LOG_FORMAT'),
    )
    return
  }
  for (const c of command.commands) {
    withLogFormat(c)
  }
}
