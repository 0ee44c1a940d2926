/**
 * `chatferry webhooks receive`: the job's webhook receiver (issue 15). Checks its flags before any
 * I/O, opens the Postgres ledger (`state.url`: deltas and workers read what it stores), registers
 * the job's webhook through the management interface (src/job/webhook-registration.ts), listens
 * (src/job/webhook-receiver.ts) until SIGINT/SIGTERM, and exits 0.
 */
import { accessSync, constants } from 'node:fs'

import { type Command, Option } from 'commander'

import { ConfigError, type ConfigProblem } from '../../errors.ts'
import { createWebhookMetrics } from '../../job/webhook-metrics.ts'
import { startReceiver } from '../../job/webhook-receiver.ts'
import { defaultWebhookId, registerReceiver } from '../../job/webhook-registration.ts'
import { createLogger } from '../../logger.ts'
import { WebhookId, WebhookUrl } from '../../target/webhooks.ts'
import { EXIT } from '../exit-codes.ts'
import { withHelp } from '../help.ts'
import { ownJobId, requireKnownJob } from '../job-guard.ts'
import { loadConfig } from '../load-config.ts'
import { metricsPort, serveMetrics } from '../metrics-server.ts'
import { openCommandContext } from '../open-command-context.ts'
import { jsonOption } from '../options.ts'
import { runStoppable } from '../signals.ts'
import { UsageError } from '../usage-error.ts'
import { management, type ManagementOptions, withManagementOptions } from './apps.ts'
import { JOB_OPTION_HELP } from './load.ts'

interface ReceiveFlags extends ManagementOptions {
  job?: string
  publicUrl?: string
  host: string
  port: string
  tlsCert?: string
  tlsKey?: string
  webhookId?: string
  json?: boolean
}

interface CheckedFlags {
  readonly publicUrl: string
  readonly port: number
  readonly tls?: { certFile: string; keyFile: string }
}

function readable(file: string): boolean {
  try {
    accessSync(file, constants.R_OK)
    return true
  } catch {
    return false
  }
}

/** Every flag problem at once, before any I/O (exit 2). */
function checkFlags(opts: ReceiveFlags): CheckedFlags {
  const problems: ConfigProblem[] = []
  const url = WebhookUrl.safeParse(opts.publicUrl ?? '')
  if (opts.publicUrl === undefined) {
    problems.push({
      path: '--public-url',
      message: 'is required: the https:// address the platform posts deliveries to (your TLS proxy, or this process with --tls-cert)',
    })
  } else if (!url.success) {
    problems.push({ path: '--public-url', message: url.error.issues[0]?.message ?? 'invalid' })
  }
  const port = Number(opts.port)
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    problems.push({ path: '--port', message: 'must be a port number (0–65535)' })
  }
  if ((opts.tlsCert === undefined) !== (opts.tlsKey === undefined)) {
    problems.push({ path: opts.tlsCert === undefined ? '--tls-cert' : '--tls-key', message: 'give --tls-cert and --tls-key together' })
  }
  for (const [flag, file] of [
    ['--tls-cert', opts.tlsCert],
    ['--tls-key', opts.tlsKey],
  ] as const) {
    if (file !== undefined && !readable(file)) {
      problems.push({ path: flag, message: `cannot read ${file}` })
    }
  }
  if (opts.webhookId !== undefined && !WebhookId.safeParse(opts.webhookId).success) {
    problems.push({ path: '--webhook-id', message: 'must be at most 50 letters, digits or _' })
  }
  if (problems.length > 0) {
    throw new ConfigError('command line', problems)
  }
  return {
    publicUrl: opts.publicUrl as string,
    port,
    ...(opts.tlsCert !== undefined && opts.tlsKey !== undefined ? { tls: { certFile: opts.tlsCert, keyFile: opts.tlsKey } } : {}),
  }
}

const DESCRIPTION =
  "Receive the platform's webhook deliveries for the job, so a delta never silently overwrites a change made on the platform " +
  '(changes.conflicts). Registers a version-2 webhook on the app through the management interface (credentials as for `webhooks`), ' +
  'subscribed to the message, group and member triggers, with retryOnFailure and Basic auth with a generated password (kept in the ledger ' +
  'only as a hash; a restart reuses it; never printed). Listens on --host/--port: plain HTTP behind your TLS proxy, or HTTPS with ' +
  '--tls-cert/--tls-key; --public-url is the https:// address the platform posts to. Answers every valid delivery 200 once it is stored ' +
  '(within the platform’s 2 s), 401 for wrong credentials, 400 for a body that is not an envelope (neither stored). Needs state.url. ' +
  'Runs until SIGINT/SIGTERM.'

/** Adds `webhooks receive` to the `webhooks` command. */
export function registerWebhooksReceiveCommand(webhooks: Command): void {
  const cmd = withManagementOptions(webhooks.command('receive'))
    .summary('receive webhook deliveries for the job: changes made on the platform, for changes.conflicts (needs state.url)')
    .description(DESCRIPTION)
    .option('--job <id>', JOB_OPTION_HELP)
    .addOption(
      new Option('--public-url <url>', 'the https:// URL the platform posts to (at most 255 characters)').env('CHATFERRY_WEBHOOK_PUBLIC_URL'),
    )
    .addOption(new Option('--host <address>', 'address to listen on').env('CHATFERRY_WEBHOOK_HOST').default('127.0.0.1'))
    .addOption(new Option('--port <n>', 'port to listen on').env('CHATFERRY_WEBHOOK_PORT').default('8443'))
    .addOption(new Option('--tls-cert <file>', 'serve HTTPS with this PEM certificate (chain); with --tls-key').env('CHATFERRY_WEBHOOK_TLS_CERT'))
    .addOption(new Option('--tls-key <file>', 'the PEM private key of --tls-cert').env('CHATFERRY_WEBHOOK_TLS_KEY'))
    .option('--webhook-id <id>', 'the webhook id on the app (default: chatferry_<job id>)')
    .addOption(jsonOption('print one JSON line on stdout once listening (jobId, webhook, url, listening)'))
  withHelp(cmd, {
    exits: [
      [0, 'stopped by SIGINT/SIGTERM: how a receiver is meant to stop'],
      [1, 'the management interface or the ledger failed; run it again'],
      [2, 'usage or configuration error (flags, no state.url, unknown job); nothing was registered'],
    ],
    examples: [
      ['webhooks receive --public-url https://hooks.acme.example/ \\\n      --port 8080', 'behind a TLS proxy forwarding to 127.0.0.1:8080'],
      [
        'webhooks receive --public-url https://hooks.acme.example:8443/ \\\n      --host 0.0.0.0 --tls-cert /etc/chatferry/tls.crt \\\n      --tls-key /etc/chatferry/tls.key',
        'HTTPS by itself on port 8443',
      ],
    ],
  })
  cmd.action(async (opts: ReceiveFlags) => {
    const flags = checkFlags(opts)
    const config = loadConfig(opts.config, process.env, { ledgerOnly: true })
    if (config.state.url === undefined) {
      throw new UsageError(
        'the webhook receiver needs a shared Postgres ledger: set state.url in the configuration (deltas and workers read the changes it stores)',
      )
    }
    const client = management(opts)
    const logger = createLogger()
    process.exitCode = await runStoppable(
      logger,
      'the deliveries in hand',
      async (stopper) => {
        const ctx = await openCommandContext({ config: opts.config, ...(opts.job !== undefined ? { job: opts.job } : {}), ledgerOnly: true })
        try {
          if (ctx.jobId === ownJobId(ctx)) {
            // The receiver may start before the bulk load: events need their job row.
            await ctx.store.ensureJob(ctx.jobId, ctx.config.target.appId)
          } else {
            await requireKnownJob(ctx)
          }
          const registration = await registerReceiver({
            client,
            ledger: ctx.store.platformEvents,
            appId: ctx.config.target.appId,
            jobId: ctx.jobId,
            webhookId: opts.webhookId ?? defaultWebhookId(ctx.jobId),
            url: flags.publicUrl,
            logger,
            signal: stopper.signal,
          })
          const receiver = await startReceiver({
            ledger: ctx.store.platformEvents,
            jobId: ctx.jobId,
            appId: ctx.config.target.appId,
            auth: registration,
            host: opts.host,
            port: flags.port,
            ...(flags.tls ? { tls: flags.tls } : {}),
            logger,
          })
          const port = metricsPort(ctx.config.metrics?.port)
          const stopMetrics =
            port === undefined
              ? undefined
              : await serveMetrics(
                  createWebhookMetrics({ jobId: ctx.jobId, appId: ctx.config.target.appId, counters: () => receiver.counters }),
                  ctx.config.metrics?.host ?? '127.0.0.1',
                  port,
                  logger,
                ).catch(async (err: unknown) => {
                  await receiver.close()
                  throw err
                })
          const listening = `${flags.tls ? 'https' : 'http'}://${receiver.address.address}:${receiver.address.port}`
          const line = { jobId: ctx.jobId, webhook: registration.webhookId, url: flags.publicUrl, listening }
          process.stdout.write(
            opts.json
              ? `${JSON.stringify(line)}\n`
              : `receiving webhook ${line.webhook} of job ${line.jobId}: the platform posts to ${line.url}, listening on ${listening}\n`,
          )
          await new Promise<void>((resolve) => {
            if (stopper.signal.aborted) {
              return resolve()
            }
            stopper.signal.addEventListener('abort', () => resolve(), { once: true })
          })
          await receiver.close()
          await stopMetrics?.()
          logger.info({ ...receiver.counters }, 'webhook receiver stopped')
          return EXIT.OK
        } finally {
          await ctx.close()
        }
      },
      EXIT.OK,
    )
  })
}
