import type { Command } from 'commander'

import { withoutSecrets } from '../../logger.ts'
import { EXITS, withHelp } from '../help.ts'
import { loadConfig } from '../load-config.ts'
import { configOption } from '../options.ts'

/** `chatferry config check`: validates the configuration file and shows what it resolves to, secrets hidden. */
export function registerConfigCommand(program: Command): void {
  const config = program.command('config').description('inspect the configuration file')
  withHelp(config, { examples: [['config check -c chatferry.yaml', 'validate it and print it resolved, secrets hidden']] })
  const check = config
    .command('check')
    .summary('validate the configuration file and print it resolved')
    .description('Validate the configuration file (no network, no database) and print it resolved, secrets hidden.')
    .addOption(configOption())
  withHelp(check, {
    exits: [[0, 'valid'], EXITS.usage],
    examples: [
      ['config check', './chatferry.yaml (or $CHATFERRY_CONFIG)'],
      ['config check -c deploy/prod.yaml', 'a file relative to the current directory'],
    ],
  })
  check.action((opts: { config: string }) => {
    const { file, ...shown } = loadConfig(opts.config)
    process.stdout.write(`${file}: valid\n${JSON.stringify(withoutSecrets(shown), null, 2)}\n`)
  })
}
