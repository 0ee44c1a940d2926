import type { Command } from 'commander'
import { runDemo } from '../run-demo.ts'

/** `chatferry demo`: the README's first command. */
export function registerDemoCommand(program: Command): void {
  program
    .command('demo')
    .description(
      'run a complete demo migration with nothing installed: a sample legacy database (SQLite), the platform\n' +
        'sandbox in-process, the embedded ledger; prints the plan, the load and a verification, exits 0 on success',
    )
    .option('--dir <dir>', 'where the demo keeps its files (wiped first)', '.chatferry/demo')
    .option('--requests-per-minute <n>', 'the demo quota', (v) => Number(v), 6000)
    .action(async (opts: { dir: string; requestsPerMinute: number }) => {
      process.exitCode = await runDemo({ dir: opts.dir, requestsPerMinute: opts.requestsPerMinute })
    })
}
