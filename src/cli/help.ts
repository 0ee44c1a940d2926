/**
 * The shape of every command's help, in one place: a one-line summary for the command list, one
 * paragraph of description (commander wraps it to the terminal), then preformatted `Exit codes:`
 * and `Examples:` blocks, and one style for defaults — commander's own `(default: …)`, with
 * string defaults shown unquoted like the ones written in descriptions.
 */
import type { Command } from 'commander'

import { EXIT } from './exit-codes.ts'

export interface HelpText {
  /** The exit codes this command uses, with what each means here. */
  readonly exits?: readonly (readonly [number, string])[]
  /** Command lines (after `chatferry `) and what each does. */
  readonly examples: readonly (readonly [string, string])[]
}

/** The meaning of the codes most commands share; a command names its own special cases. */
export const EXITS = {
  ok: [EXIT.OK, 'done'] as const,
  error: [EXIT.ERROR, 'stopped by an error or by SIGINT/SIGTERM; run the same command again'] as const,
  usage: [EXIT.USAGE, 'usage or configuration error; nothing was done'] as const,
}

/** Adds the `Exit codes:` and `Examples:` blocks after the command's options. */
export function withHelp(command: Command, help: HelpText): Command {
  const lines: string[] = []
  if (help.exits && help.exits.length > 0) {
    lines.push('', 'Exit codes:')
    for (const [code, text] of help.exits) {
      lines.push(...wrapIndented(`  ${code}  `, text))
    }
  }
  lines.push('', 'Examples:')
  for (const [args, what] of help.examples) {
    lines.push(`  $ chatferry ${args}`)
    lines.push(...wrapIndented('      ', what))
  }
  return command.addHelpText('after', lines.join('\n'))
}

/** Words of `text` in lines of at most `width` columns, the first after `lead`, the rest under it. */
export function wrapIndented(lead: string, text: string, width = 80): string[] {
  const pad = ' '.repeat(lead.length)
  const out: string[] = []
  let line = lead
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line.trim() !== '' && line !== lead && line.length + 1 + word.length > width) {
      out.push(line)
      line = pad + word
    } else {
      line += line === lead || line === pad ? word : ` ${word}`
    }
  }
  out.push(line)
  return out
}

/**
 * Every string default shown as commander shows written ones, `(default: chatferry.yaml)`, not
 * `(default: "chatferry.yaml")`; an empty list as `none`. Walks the whole program once.
 */
export function unquoteDefaults(command: Command): void {
  for (const o of command.options) {
    if (o.defaultValueDescription !== undefined) {
      continue
    }
    if (typeof o.defaultValue === 'string') {
      o.defaultValueDescription = o.defaultValue
    } else if (Array.isArray(o.defaultValue) && o.defaultValue.length === 0) {
      o.defaultValueDescription = 'none'
    }
  }
  for (const c of command.commands) {
    unquoteDefaults(c)
  }
}
