import { type Command, InvalidArgumentError, Option } from 'commander'

import { DEMO_SOURCES, type DemoSource } from '../../demo/sample-export.ts'
import { DEMO_SIZE, type SampleSize } from '../../demo/sample-legacy.ts'
import { withHelp } from '../help.ts'
import { runDemo } from '../run-demo.ts'

const DEMO_MESSAGES = DEMO_SIZE.groupMessages + DEMO_SIZE.directMessages

/** `--messages <n>`: the sample's posts, four in five in rooms and one in five direct, as the default's. */
function parseMessages(value: string): SampleSize {
  const n = Number(value)
  if (!Number.isInteger(n) || n < 1000 || n > 1_000_000) {
    throw new InvalidArgumentError(`expected a whole number from 1000 to 1000000, got ${JSON.stringify(value)}`)
  }
  const directMessages = Math.round(n / 5)
  return { ...DEMO_SIZE, groupMessages: n - directMessages, directMessages }
}

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
    .option('--messages <n>', `the sample's posts (a smaller demo is quicker; default ${DEMO_MESSAGES})`, parseMessages)
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
      ['demo --messages 3000', 'a tenth of the sample, in a few seconds'],
      ['demo --source sendbird-export', 'the same history read from Sendbird Data Export files (or stream-chat-export)'],
    ],
  })
  demo.action(async (opts: { dir: string; requestsPerMinute: number; messages?: SampleSize; source: DemoSource }) => {
    const size = opts.messages !== undefined ? { size: opts.messages } : {}
    process.exitCode = await runDemo({ dir: opts.dir, requestsPerMinute: opts.requestsPerMinute, source: opts.source, ...size })
  })
}
