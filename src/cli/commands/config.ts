import type { Command } from 'commander'
import { loadConfig } from '../../config.ts'
import { redactUrl } from '../../logger.ts'
import { configOption } from '../options.ts'

/** `chatferry config check`: validates the configuration file and shows what it resolves to, secrets hidden. */
export function registerConfigCommand(program: Command): void {
  const config = program.command('config').description('inspect the configuration file')
  config
    .command('check')
    .description('validate the configuration file (no network, no database) and print it resolved, secrets hidden')
    .addOption(configOption())
    .action((opts: { config: string }) => {
      const c = loadConfig(opts.config)
      const shown = {
        ...c,
        target: { ...c.target, apiKey: '***' },
        ...(c.management ? { management: { ...c.management, key: '***', secret: '***' } } : {}),
        state: c.state.url ? { ...c.state, url: redactUrl(c.state.url) } : c.state,
        ...(c.source ? { source: { ...c.source, url: redactUrl(c.source.url) } } : {}),
      }
      process.stdout.write(`${opts.config}: valid\n${JSON.stringify(shown, null, 2)}\n`)
    })
}
