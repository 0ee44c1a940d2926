import type { Command } from 'commander'
import { Option } from 'commander'

import { DEMO_SOURCES, type DemoSource } from '../../demo/sample-export.ts'
import { withHelp } from '../help.ts'
import { runDemo } from '../run-demo.ts'

/** `chatferry demo`: the README's first command. */
export function registerDemoCommand(program: Command): void {
  const demo = program
    .command('demo')
    .summary('a complete demo migration with nothing installed')
    .description(
      'Run a complete demo migration with nothing installed: a sample legacy database (SQLite), the platform ' +
        'sandbox in-process, the embedded ledger. Prints the plan, the load and a verification.',
    )
    .option('--dir <dir>', 'where the demo keeps its files (wiped first)', '.chatferry/demo')
    .option('--requests-per-minute <n>', 'the demo quota', (v) => Number(v), 6000)
    .addOption(
      new Option('--source <source>', 'what the demo reads: the SQLite database, or the same history as a Sendbird or Stream Chat export')
        .choices(DEMO_SOURCES)
        .default('sql'),
    )
  withHelp(demo, {
    exits: [
      [0, 'the demo migrated and verified everything'],
      [1, 'something did not match (listed)'],
    ],
    examples: [
      ['demo', 'the whole demo in .chatferry/demo (under a minute)'],
      ['demo --dir /tmp/cf-demo --requests-per-minute 600', 'elsewhere, at a slower quota'],
      ['demo --source sendbird-export', 'the same history read from Sendbird Data Export files (or stream-chat-export)'],
    ],
  })
  demo.action(async (opts: { dir: string; requestsPerMinute: number; source: DemoSource }) => {
    process.exitCode = await runDemo({ dir: opts.dir, requestsPerMinute: opts.requestsPerMinute, source: opts.source })
  })
}
