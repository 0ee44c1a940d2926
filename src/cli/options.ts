/** Options several commands share, so they are spelled and documented the same everywhere. */
import { Option } from 'commander'

import { DEFAULT_CONFIG_FILE } from './load-config.ts'

export function configOption(): Option {
  return new Option('-c, --config <file>', 'configuration file, relative to the directory the command is run in')
    .env('CHATFERRY_CONFIG')
    .default(DEFAULT_CONFIG_FILE)
}

export function jsonOption(description = 'print machine-readable JSON instead of a table'): Option {
  return new Option('--json', description)
}

/** Prints an aligned text table; the CLI's only use of console output besides summaries. */
export function printTable(rows: readonly (readonly (string | number)[])[], out: NodeJS.WritableStream = process.stdout): void {
  if (rows.length === 0) {
    return
  }
  const widths: number[] = []
  for (const row of rows) {
    row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, String(cell).length)))
  }
  for (const row of rows) {
    out.write(
      `${row
        .map((cell, i) => (typeof cell === 'number' ? String(cell).padStart(widths[i] ?? 0) : String(cell).padEnd(widths[i] ?? 0)))
        .join('  ')
        .trimEnd()}\n`,
    )
  }
}
