/**
 * The help of every command (issue 14): an `Examples:` block, commander's one style for defaults
 * (`(default: …)`, never "default 60" or "defaults to"), and nothing wider than 80 columns.
 */
import type { Command } from 'commander'
import { describe, expect, it } from 'vitest'

import { buildProgram } from '../../../src/cli/program.ts'

function everyCommand(command: Command, path: string[] = []): { path: string; command: Command }[] {
  const here = { path: path.join(' ') || '(chatferry)', command }
  return [here, ...command.commands.filter((c) => c.name() !== 'help').flatMap((c) => everyCommand(c, [...path, c.name()]))]
}

describe('chatferry --help', () => {
  const program = buildProgram()
  const commands = everyCommand(program)

  it('covers every command, subcommands included', () => {
    expect(commands.map((c) => c.path)).toEqual(
      expect.arrayContaining([
        '(chatferry)',
        'demo',
        'config check',
        'apps create',
        'sandbox',
        'plan',
        'run',
        'load',
        'worker',
        'status',
        'rejects',
        'retry-rejected',
        'verify',
        'completion',
      ]),
    )
  })

  for (const { path, command } of commands) {
    it(`${path}: examples, one style of defaults, 80 columns`, () => {
      // outputHelp, as --help prints it: addHelpText('after') blocks are written on the help event.
      const out: string[] = []
      command.configureOutput({ writeOut: (s) => void out.push(s), getOutHelpWidth: () => 80 })
      command.outputHelp()
      const text = out.join('')
      expect(text, path).toMatch(/\nExamples:\n {2}\$ chatferry /)
      expect(text, path).not.toMatch(/\(default [^:]|defaults to|\(default: "/)
      for (const line of text.split('\n')) {
        expect(line.length, `${path}: ${line}`).toBeLessThanOrEqual(80)
      }
    })
  }

  it('every leaf command that takes --job says what a job is and defaults it the same way', () => {
    for (const { path, command } of commands) {
      const job = command.options.find((o) => o.long === '--job')
      if (!job) {
        continue
      }
      if (job.mandatory) {
        // A destructive command (`purge`) takes no default job: it must be named.
        expect(job.description, path).toMatch(/no default/)
        continue
      }
      expect(job.description, path).toMatch(/\(default: \$CHATFERRY_JOB_ID, else job\.id, else the target app id\)$/)
    }
  })
})
