import type { Command } from 'commander'
import { loadConfig } from '../load-config.ts'
import { withoutSecrets } from '../../logger.ts'
import { configOption } from '../options.ts'

/** `chatferry config check`: validates the configuration file and shows what it resolves to, secrets hidden. */
export function registerConfigCommand(program: Command): void {
  const config = program.command('config').description('inspect the configuration file')
  config
    .command('check')
    .description('validate the configuration file (no network, no database) and print it resolved, secrets hidden')
    .addOption(configOption())
    .action((opts: { config: string }) => {
      const { file, ...shown } = loadConfig(opts.config)
      process.stdout.write(`${file}: valid\n${JSON.stringify(withoutSecrets(shown), null, 2)}\n`)
    })
}
