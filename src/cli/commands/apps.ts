import { type Command, Option } from 'commander'

import { ConfigError } from '../../errors.ts'
import { createManagementClient, type ManagementClient } from '../../target/client.ts'
import { DEFAULT_MANAGEMENT_URL, type Region, REGIONS, secureUrl } from '../../target/config.ts'
import { EXITS, withHelp } from '../help.ts'
import { loadConfig } from '../load-config.ts'
import { configOption, jsonOption, printTable } from '../options.ts'

export interface ManagementOptions {
  config: string
  mgmtUrl?: string
  mgmtKey?: string
  mgmtSecret?: string
}

/**
 * Management credentials come from the flags / environment when given (creating the first app
 * comes before any configuration file exists), otherwise from the file's `management` section.
 */
export function management(opts: ManagementOptions): ManagementClient {
  if (opts.mgmtKey !== undefined || opts.mgmtSecret !== undefined) {
    const problems = []
    if (!opts.mgmtKey) {
      problems.push({ path: '--mgmt-key', message: 'is required with --mgmt-secret (or $CHATFERRY_MGMT_KEY)' })
    }
    if (!opts.mgmtSecret) {
      problems.push({ path: '--mgmt-secret', message: 'is required with --mgmt-key (or $CHATFERRY_MGMT_SECRET)' })
    }
    const url = opts.mgmtUrl ?? DEFAULT_MANAGEMENT_URL
    const checked = secureUrl.safeParse(url)
    if (!checked.success) {
      problems.push({ path: '--mgmt-url', message: checked.error.issues[0]?.message ?? 'invalid' })
    }
    if (problems.length > 0) {
      throw new ConfigError('command line', problems)
    }
    return createManagementClient({ url, key: opts.mgmtKey as string, secret: opts.mgmtSecret as string })
  }
  const config = loadConfig(opts.config)
  if (!config.management) {
    throw new ConfigError(config.file, [{ path: 'management', message: 'is required for app management (url, key, secret)' }])
  }
  return createManagementClient(config.management)
}

export function withManagementOptions(command: Command): Command {
  return command
    .addOption(configOption())
    .addOption(new Option('--mgmt-url <url>', 'management interface URL, with --mgmt-key').env('CHATFERRY_MGMT_URL').default(DEFAULT_MANAGEMENT_URL))
    .addOption(new Option('--mgmt-key <key>', 'management key; instead of the config file').env('CHATFERRY_MGMT_KEY'))
    .addOption(new Option('--mgmt-secret <secret>', 'management secret; instead of the config file').env('CHATFERRY_MGMT_SECRET'))
}

/** `chatferry apps create|list|delete`: the management interface, for setting up target apps. */
export function registerAppsCommand(program: Command): void {
  const apps = program.command('apps').description("manage target apps through the platform's management interface")
  withHelp(apps, {
    examples: [
      ['apps create --name "Acme chat" --region eu', 'a new app; prints its id and fullAccess REST API key'],
      ['apps list --search acme', 'the apps of the account'],
    ],
  })

  withHelp(withManagementOptions(apps.command('create')), {
    exits: [[0, 'created'], [1, 'the management interface refused or failed'], EXITS.usage],
    examples: [
      ['apps create --name "Acme chat" --region eu', 'credentials from management: in chatferry.yaml'],
      ['apps create --name Rehearsal --json', 'prints {"appId","region","apiKey"}'],
      [
        'apps create --name X --mgmt-url http://127.0.0.1:4010',
        'against a local sandbox; key and secret from $CHATFERRY_MGMT_KEY and $CHATFERRY_MGMT_SECRET',
      ],
    ],
  })
    .description('Create an empty app (without the platform’s sample users); prints its app id and its fullAccess REST API key.')
    .requiredOption('--name <name>', 'display name of the app (at most 100 characters)')
    .addOption(new Option('--region <region>', 'region of the app').choices(REGIONS).default('us'))
    .addOption(jsonOption())
    .action(async (opts: ManagementOptions & { name: string; region: string; json?: boolean }) => {
      if (!(REGIONS as readonly string[]).includes(opts.region)) {
        throw new ConfigError('--region', [{ path: 'region', message: `expected one of ${REGIONS.join(', ')}, got ${opts.region}` }])
      }
      // Empty, for a migration: the platform otherwise fills a new app with its sample users.
      const created = await management(opts).createApp({ name: opts.name, region: opts.region as Region, version: '3', skipSampleData: true })
      if (opts.json) {
        process.stdout.write(`${JSON.stringify({ appId: created.appId, region: created.region, apiKey: created.restApiKey })}\n`)
      } else {
        process.stdout.write(`app ${created.appId} created in ${created.region}\nREST API key (fullAccess): ${created.restApiKey}\n`)
      }
    })

  withHelp(withManagementOptions(apps.command('list')), {
    exits: [[0, 'listed'], [1, 'the management interface refused or failed'], EXITS.usage],
    examples: [
      ['apps list', 'every app: id, name, region, state'],
      ['apps list --search acme --json', 'matching apps as a JSON array'],
    ],
  })
    .description('List the apps of the account.')
    .option('--search <text>', 'only apps whose id or name matches')
    .addOption(jsonOption())
    .action(async (opts: ManagementOptions & { search?: string; json?: boolean }) => {
      const list = await management(opts).listApps(opts.search ? { searchKey: opts.search, perPage: 100 } : { perPage: 100 })
      if (opts.json) {
        process.stdout.write(`${JSON.stringify(list.map((a) => ({ id: a.id, name: a.name, region: a.region, state: a.state })))}\n`)
        return
      }
      printTable([['APP ID', 'NAME', 'REGION', 'STATE'], ...list.map((a) => [a.id, a.name, a.region, a.state ?? ''])])
    })

  withHelp(withManagementOptions(apps.command('delete')), {
    exits: [[0, 'scheduled for deletion'], [1, 'the management interface refused or failed'], EXITS.usage],
    examples: [['apps delete acme-rehearsal --yes', 'schedule the app acme-rehearsal for deletion']],
  })
    .description('Schedule an app for deletion (irreversible).')
    .argument('<appId>', 'the app to delete')
    .requiredOption('--yes', 'confirm the deletion')
    .action(async (appId: string, opts: ManagementOptions) => {
      const res = await management(opts).deleteApp(appId)
      const when = res.scheduledToDeleteAt ? ` at ${new Date(res.scheduledToDeleteAt * 1000).toISOString()}` : ''
      process.stdout.write(`app ${appId} scheduled for deletion${when}\n`)
    })
}
