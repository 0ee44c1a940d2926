/** `chatferry sandbox`: the local emulator of the target platform (see src/sandbox/README.md). */
import { type Command, InvalidArgumentError, Option } from 'commander'

import type { DatabaseLocation } from '../../db.ts'
import { ConfigError } from '../../errors.ts'
import { createLogger, redactUrl } from '../../logger.ts'
import {
  type AppSettingsPatch,
  type CreateAppInput,
  DEFAULT_MANAGEMENT_KEY,
  DEFAULT_MANAGEMENT_SECRET,
  DEFAULT_SANDBOX_HOST,
  startSandbox,
} from '../../sandbox/index.ts'
import { type Region, REGIONS } from '../../target/config.ts'
import { isPlatformId } from '../../target/schemas.ts'
import { isLoopbackHost } from '../../target/transport.ts'
import { EXITS, withHelp } from '../help.ts'

export const DEFAULT_SANDBOX_PORT = 4010

interface SandboxCommandOptions {
  port: number
  host?: string
  state?: string
  dir?: string
  mgmtKey?: string
  mgmtSecret?: string
  app: CreateAppInput[]
  requestsPerMinute?: number
  retentionDays?: number
  webhooksOnImport?: boolean
  maxApps?: number
}

function integer(name: string, min: number, max: number) {
  return (value: string): number => {
    const n = Number(value)
    if (!/^\d+$/.test(value) || n < min || n > max) {
      throw new InvalidArgumentError(`${name} must be an integer from ${min} to ${max}, got ${value}`)
    }
    return n
  }
}

/** `--app ID:APIKEY[:REGION]`, repeatable. */
function collectApp(value: string, previous: CreateAppInput[]): CreateAppInput[] {
  const [id, apiKey, region, ...rest] = value.split(':')
  if (!id || !apiKey || rest.length > 0) {
    throw new InvalidArgumentError(`expected ID:APIKEY or ID:APIKEY:REGION, got ${value}`)
  }
  if (!isPlatformId(id)) {
    throw new InvalidArgumentError(`an app id is lowercase alpha-dash (a-z, 0-9, -, _), got ${id}`)
  }
  if (region !== undefined && !(REGIONS as readonly string[]).includes(region)) {
    throw new InvalidArgumentError(`the region must be one of ${REGIONS.join(', ')}, got ${region}`)
  }
  return [...previous, { id, apiKey, ...(region ? { region: region as Region } : {}) }]
}

/**
 * `chatferry sandbox`: runs the local emulator of the target platform until SIGINT/SIGTERM.
 */
export function registerSandboxCommand(program: Command): void {
  const sandbox = program
    .command('sandbox')
    .summary('run a local emulator of the target platform')
    .description(
      'Run a local emulator of the target platform (management, chat and data-import interfaces) for demos and tests, ' +
        'until SIGINT/SIGTERM. App interfaces are at http://HOST:PORT/apps/<appId>/v3, the management interface at http://HOST:PORT.',
    )
  withHelp(sandbox, {
    exits: [[0, 'stopped by SIGINT/SIGTERM'], [1, 'could not start (port in use, database unreachable)'], EXITS.usage],
    examples: [
      ['sandbox --app rehearsal:some-key', 'one app; point target.baseUrl at http://127.0.0.1:4010/apps/rehearsal/v3'],
      ['sandbox --port 0 --dir .sandbox --requests-per-minute 600', 'a free port, data kept in .sandbox, a faster quota'],
    ],
  })
  sandbox
    .addOption(
      new Option('--port <n>', 'port to listen on (0 picks a free one)').argParser(integer('--port', 0, 65535)).default(DEFAULT_SANDBOX_PORT),
    )
    .addOption(
      new Option(
        '--host <address>',
        `interface to listen on; a non-loopback address exposes the sandbox to the network (default: ${DEFAULT_SANDBOX_HOST})`,
      ),
    )
    .addOption(new Option('--state <url>', 'keep the sandbox data in this Postgres database (postgres://…), schema "sandbox"').conflicts('dir'))
    .addOption(new Option('--dir <path>', 'keep the sandbox data in an embedded database in this directory (default: in memory, lost on exit)'))
    .addOption(new Option('--mgmt-key <key>', 'key header of the management interface (default: $CHATFERRY_SANDBOX_MGMT_KEY, else sandbox-key)'))
    .addOption(
      new Option(
        '--mgmt-secret <secret>',
        'secret header of the management interface (default: $CHATFERRY_SANDBOX_MGMT_SECRET, else sandbox-secret)',
      ),
    )
    .addOption(
      new Option(
        '--app <id:apikey[:region]>',
        'create an app with this id and fullAccess API key at start; repeatable; the region is us unless given',
      )
        .argParser(collectApp)
        .default([], 'none'),
    )
    .addOption(
      new Option('--requests-per-minute <n>', 'data-import requests per app per minute (default: 60, the documented limit)').argParser(
        integer('--requests-per-minute', 1, 1_000_000),
      ),
    )
    .addOption(
      new Option('--retention-days <n>', 'refuse messages older than this many days (default: 183, about the documented 6 months)').argParser(
        integer('--retention-days', 0, 100_000),
      ),
    )
    .addOption(
      new Option(
        '--max-apps <n>',
        'active apps beyond which POST /apps is refused with ERR_APP_CREATION_FAILED_MAX_LIMIT (default: 5; the platform does not publish its number)',
      ).argParser(integer('--max-apps', 1, 100_000)),
    )
    .addOption(
      new Option('--webhooks-on-import', 'deliver webhooks (group_created, group_member_added, message_sent) for imported data (default: off)'),
    )
    .action(async (opts: SandboxCommandOptions) => {
      if (opts.state !== undefined && !/^postgres(ql)?:\/\//.test(opts.state)) {
        throw new ConfigError('--state', [{ path: 'state', message: `must be a postgres:// or postgresql:// URL, got ${redactUrl(opts.state)}` }])
      }
      const state: DatabaseLocation = opts.state !== undefined ? { url: opts.state } : { dir: opts.dir ?? 'memory://' }
      const defaults: AppSettingsPatch = {
        ...(opts.requestsPerMinute !== undefined ? { requestsPerMinute: opts.requestsPerMinute } : {}),
        ...(opts.retentionDays !== undefined ? { retentionDays: opts.retentionDays } : {}),
        ...(opts.webhooksOnImport ? { webhooksOnImport: true } : {}),
      }
      const started = Date.now()
      const sandbox = await startSandbox({
        host: opts.host ?? DEFAULT_SANDBOX_HOST,
        // Only an explicit --host may name a non-loopback address.
        allowNonLoopback: opts.host !== undefined,
        port: opts.port,
        state,
        management: {
          key: opts.mgmtKey ?? (process.env.CHATFERRY_SANDBOX_MGMT_KEY || DEFAULT_MANAGEMENT_KEY),
          secret: opts.mgmtSecret ?? (process.env.CHATFERRY_SANDBOX_MGMT_SECRET || DEFAULT_MANAGEMENT_SECRET),
        },
        defaults,
        ...(opts.maxApps !== undefined ? { maxApps: opts.maxApps } : {}),
        logger: createLogger(),
      })
      const apps = []
      try {
        for (const app of opts.app) {
          apps.push(await sandbox.createApp(app))
        }
      } catch (err) {
        await sandbox.close()
        throw err
      }
      if (opts.host !== undefined && !isLoopbackHost(opts.host)) {
        process.stderr.write(`chatferry sandbox: warning: listening on ${opts.host}, reachable from the network; the sandbox is not hardened\n`)
      }
      // SIGINT/SIGTERM are taken before the listening line: whoever waits for it may stop the
      // sandbox the moment it reads it, and must get a clean stop (exit 0), not Node's default death.
      const stopped = new Promise<void>((resolve) => {
        const stop = () => {
          process.off('SIGINT', stop)
          process.off('SIGTERM', stop)
          resolve()
        }
        process.on('SIGINT', stop)
        process.on('SIGTERM', stop)
      })
      // One write, so a reader that waits for the listening line also has the apps' URLs.
      process.stdout.write(
        [`chatferry sandbox listening on ${sandbox.url}`, ...apps.map((app) => `  app ${app.id} (${app.region}): ${app.baseUrl}`)].join('\n') + '\n',
      )
      process.stderr.write(
        `chatferry sandbox: started in ${Date.now() - started} ms (${Math.round(performance.now())} ms since the process started); management key/secret as configured; Ctrl-C stops it\n`,
      )
      await stopped
      await sandbox.close()
      process.stderr.write('chatferry sandbox: stopped\n')
    })
}
