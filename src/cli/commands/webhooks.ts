import { type Command, Option } from 'commander'

import { ConfigError } from '../../errors.ts'
import type { ManagementClient } from '../../target/client.ts'
import {
  CreateWebhookRequest,
  parseWebhookInput,
  UpdateWebhookRequest,
  WebhookId,
  WebhookInputError,
  type WebhookRecord,
  WebhookTriggersRequest,
} from '../../target/webhooks.ts'
import { EXITS, type HelpText, withHelp } from '../help.ts'
import { loadConfig } from '../load-config.ts'
import { jsonOption, printTable } from '../options.ts'
import { management, type ManagementOptions, withManagementOptions } from './apps.ts'
import { registerWebhooksReceiveCommand } from './webhooks-receive.ts'

interface WebhookOptions extends ManagementOptions {
  app?: string
  json?: boolean
}

/** The flag (or argument) a user types for each field of the platform's body. */
const FLAG_OF: Record<string, string> = {
  id: '<id>',
  name: '--name',
  webhookURL: '--url',
  useBasicAuth: '--basic-auth',
  username: '--username',
  password: '--password',
  enabled: '--enabled',
  retryOnFailure: '--retry-on-failure',
  triggerIds: '<triggers...>',
}

/**
 * Checks input with the same schemas the client uses, before anything is sent, and names each
 * problem by its flag and field (never by its value: the password is a secret).
 */
function checked<T>(parse: () => T): T {
  try {
    return parse()
  } catch (err) {
    if (!(err instanceof WebhookInputError)) {
      throw err
    }
    throw new ConfigError(
      'command line',
      err.problems.map((p) => {
        const field = p.path.split('.')[0] ?? ''
        const flag = FLAG_OF[field]
        return { path: flag ? `${flag} (${field})` : field, message: p.message }
      }),
    )
  }
}

function appIdOf(opts: WebhookOptions): string {
  if (opts.app) {
    return opts.app
  }
  try {
    return loadConfig(opts.config).target.appId
  } catch (err) {
    if (err instanceof ConfigError) {
      throw new ConfigError('command line', [{ path: '--app', message: `is required (or target.appId in ${opts.config})` }])
    }
    throw err
  }
}

/** What is printed of a webhook: the answer's fields, never a password (answers carry none; this makes sure). */
function shown(w: WebhookRecord): Record<string, unknown> {
  const { password: _password, ...rest } = w as WebhookRecord & { password?: unknown }
  return rest
}

function printWebhooks(list: readonly WebhookRecord[], json: boolean | undefined): void {
  if (json) {
    process.stdout.write(`${JSON.stringify(list.map(shown))}\n`)
    return
  }
  if (list.length === 0) {
    process.stdout.write('no webhooks\n')
    return
  }
  const when = (s: number | undefined) => (s === undefined ? '' : new Date(s * 1000).toISOString().replace('.000Z', 'Z'))
  printTable([
    ['ID', 'NAME', 'URL', 'ENABLED', 'VERSION', 'UPDATED'],
    ...list.map((w) => [
      w.id,
      w.name ?? '',
      w.webhookURL ?? '',
      w.enabled === undefined ? '' : w.enabled ? 'yes' : 'no',
      w.version ?? '',
      when(w.updatedAt ?? w.createdAt),
    ]),
  ])
}

function withWebhookOptions(command: Command): Command {
  return withManagementOptions(command).addOption(
    new Option('--app <appId>', 'the app whose webhooks these are (default: target.appId of the config file)').env('CHATFERRY_APP_ID'),
  )
}

const passwordOption = () =>
  new Option(
    '--password <password>',
    'Basic auth password, letters and digits, at most 100 (prefer $CHATFERRY_WEBHOOK_PASSWORD: a flag shows in the process list)',
  ).env('CHATFERRY_WEBHOOK_PASSWORD')

/** The exit codes of every webhooks command: input is checked before any request is sent. */
const WEBHOOK_EXITS: HelpText['exits'] = [
  EXITS.ok,
  [1, 'the management interface refused or failed'],
  [2, 'usage error, or input that breaks a documented rule; nothing was sent'],
]

/** Examples for the group and for `triggers`: the whole life of a webhook. */
const FAMILY_EXAMPLES: HelpText['examples'] = [
  [
    'webhooks create hooks1 --name Audit --url https://h.acme.example/c',
    'a webhook; credentials from management: in chatferry.yaml or --mgmt-key/--mgmt-secret/--mgmt-url',
  ],
  [
    'webhooks create hooks2 --name A --url https://h.acme.example/x \\\n      --basic-auth --username acme',
    'with Basic auth; the password from $CHATFERRY_WEBHOOK_PASSWORD',
  ],
  ['webhooks triggers add hooks1 message_sent group_created', 'subscribe it to two triggers'],
  ['webhooks list --json', 'the webhooks of the app as a JSON array'],
  ['webhooks update hooks1 --disabled', 'stop deliveries without deleting it'],
  ['webhooks triggers remove hooks1 group_created', 'unsubscribe it from one trigger'],
  ['webhooks delete hooks1 --yes', 'delete it and its triggers'],
]

const RULES =
  'Documented rules, checked before any request (exit 2): id at most 50 letters, digits or _; name at most 50; URL at most 255 and https://; username at most 50 and password at most 100, letters and digits only; at most 25 webhooks per app. Every request sends X-Webhook-Version: 2.'

/** `chatferry webhooks …`: an app's webhooks and their triggers through the management interface. */
export function registerWebhooksCommand(program: Command): void {
  const webhooks = program.command('webhooks')
  withHelp(webhooks, { exits: WEBHOOK_EXITS, examples: FAMILY_EXAMPLES })
  webhooks
    .description(`Manage an app's webhooks and their triggers through the management interface. ${RULES}`)
    .summary("manage an app's webhooks and their triggers through the management interface")

  const run = async <T>(opts: WebhookOptions, work: (client: ManagementClient, appId: string) => Promise<T>): Promise<T> => {
    const appId = appIdOf(opts)
    return work(management(opts), appId)
  }

  withHelp(withWebhookOptions(webhooks.command('list')), {
    exits: WEBHOOK_EXITS,
    examples: [['webhooks list --app acme-chat --json', 'the webhooks of acme-chat as a JSON array']],
  })
    .description('list the webhooks of the app')
    .option('--search <text>', 'only webhooks whose name contains this')
    .addOption(jsonOption())
    .action(async (opts: WebhookOptions & { search?: string }) => {
      const list = await run(opts, (c, appId) => c.listWebhooks(appId, { perPage: 1000, ...(opts.search ? { searchKey: opts.search } : {}) }))
      printWebhooks(list, opts.json)
    })

  withHelp(withWebhookOptions(webhooks.command('create')), {
    exits: WEBHOOK_EXITS,
    examples: [
      [
        'webhooks create hooks1 --app acme-chat --name Audit \\\n      --url https://hooks.acme.example/cc --retry-on-failure',
        'a webhook that retries failed deliveries; add triggers next',
      ],
    ],
  })
    .description('create a webhook (add triggers with `webhooks triggers add`)')
    .argument('<id>', 'webhook id: at most 50 letters, digits or _')
    .requiredOption('--name <name>', 'display name, at most 50 characters')
    .requiredOption('--url <url>', 'where deliveries go: https://, at most 255 characters')
    .option('--basic-auth', 'send Authorization: Basic with --username/--password')
    .option('--username <username>', 'Basic auth username, letters and digits, at most 50')
    .addOption(passwordOption())
    .option('--disabled', 'create it disabled')
    .option('--retry-on-failure', 'retry failed deliveries (after 10 s and 30 s)')
    .addOption(jsonOption())
    .action(
      async (
        id: string,
        opts: WebhookOptions & {
          name: string
          url: string
          basicAuth?: boolean
          username?: string
          password?: string
          disabled?: boolean
          retryOnFailure?: boolean
        },
      ) => {
        const body = checked(() =>
          parseWebhookInput('webhooks create', CreateWebhookRequest, {
            id,
            name: opts.name,
            webhookURL: opts.url,
            useBasicAuth: opts.basicAuth === true,
            ...(opts.username !== undefined ? { username: opts.username } : {}),
            ...(opts.password !== undefined ? { password: opts.password } : {}),
            enabled: opts.disabled !== true,
            retryOnFailure: opts.retryOnFailure === true,
          }),
        )
        const created = await run(opts, (c, appId) => c.createWebhook(appId, body))
        printWebhooks([created], opts.json)
      },
    )

  withHelp(withWebhookOptions(webhooks.command('update')), {
    exits: WEBHOOK_EXITS,
    examples: [['webhooks update hooks1 --disabled --no-retry-on-failure', 'stop deliveries and retries; other fields stay as they are']],
  })
    .description('change a webhook; only the flags given change')
    .argument('<id>', 'the webhook')
    .option('--name <name>', 'display name, at most 50 characters')
    .option('--url <url>', 'https://, at most 255 characters')
    .option('--basic-auth', 'turn Basic auth on (needs a username and password, given now or before)')
    .option('--no-basic-auth', 'turn Basic auth off')
    .option('--username <username>', 'Basic auth username')
    .addOption(passwordOption())
    .option('--enabled', 'enable it')
    .option('--disabled', 'disable it')
    .option('--retry-on-failure', 'retry failed deliveries')
    .option('--no-retry-on-failure', 'do not retry failed deliveries')
    .addOption(jsonOption())
    .action(
      async (
        id: string,
        opts: WebhookOptions & {
          name?: string
          url?: string
          basicAuth?: boolean
          username?: string
          password?: string
          enabled?: boolean
          disabled?: boolean
          retryOnFailure?: boolean
        },
        command: Command,
      ) => {
        if (opts.enabled && opts.disabled) {
          throw new ConfigError('command line', [{ path: '--enabled/--disabled', message: 'give one of them, not both' }])
        }
        // Negatable flags default to true; only what the user typed is a change.
        const given = (name: string) => command.getOptionValueSource(name) === 'cli' || command.getOptionValueSource(name) === 'env'
        const changes = {
          ...(opts.name !== undefined ? { name: opts.name } : {}),
          ...(opts.url !== undefined ? { webhookURL: opts.url } : {}),
          ...(given('basicAuth') ? { useBasicAuth: opts.basicAuth === true } : {}),
          ...(opts.username !== undefined ? { username: opts.username } : {}),
          ...(opts.password !== undefined ? { password: opts.password } : {}),
          ...(opts.enabled ? { enabled: true } : opts.disabled ? { enabled: false } : {}),
          ...(given('retryOnFailure') ? { retryOnFailure: opts.retryOnFailure === true } : {}),
        }
        checked(() => parseWebhookInput('webhooks update', WebhookId, id, ['id']))
        const body = checked(() => parseWebhookInput('webhooks update', UpdateWebhookRequest, changes))
        if (Object.keys(body).length === 0) {
          throw new ConfigError('command line', [
            {
              path: '',
              message:
                'nothing to change: give at least one of --name, --url, --basic-auth, --username, --password, --enabled/--disabled, --retry-on-failure',
            },
          ])
        }
        const updated = await run(opts, (c, appId) => c.updateWebhook(appId, id, body))
        printWebhooks([updated], opts.json)
      },
    )

  withHelp(withWebhookOptions(webhooks.command('delete')), {
    exits: WEBHOOK_EXITS,
    examples: [['webhooks delete hooks1 --app acme-chat --yes', 'delete hooks1 and its triggers']],
  })
    .description('delete a webhook and its triggers')
    .argument('<id>', 'the webhook')
    .requiredOption('--yes', 'confirm the deletion')
    .addOption(jsonOption())
    .action(async (id: string, opts: WebhookOptions) => {
      checked(() => parseWebhookInput('webhooks delete', WebhookId, id, ['id']))
      const res = await run(opts, (c, appId) => c.deleteWebhook(appId, id))
      if (opts.json) {
        process.stdout.write(`${JSON.stringify({ id, ...res })}\n`)
      } else {
        process.stdout.write(`webhook ${id} deleted\n`)
      }
    })

  const triggers = withHelp(webhooks.command('triggers'), {
    examples: FAMILY_EXAMPLES.filter(([args]) => args.startsWith('webhooks triggers')),
  }).description('the triggers of a webhook: add, remove, list')

  const triggerIds = (id: string, ids: string[]) => {
    checked(() => parseWebhookInput('webhooks triggers', WebhookId, id, ['id']))
    return checked(() => parseWebhookInput('webhooks triggers', WebhookTriggersRequest, { triggerIds: ids })).triggerIds
  }

  withHelp(withWebhookOptions(triggers.command('add')), {
    exits: WEBHOOK_EXITS,
    examples: [['webhooks triggers add hooks1 message_sent group_member_added', 'subscribe hooks1 to two triggers; prints what was added']],
  })
    .description('subscribe a webhook to triggers (documented ids, e.g. message_sent group_created)')
    .argument('<id>', 'the webhook')
    .argument('<triggers...>', 'trigger ids')
    .addOption(jsonOption())
    .action(async (id: string, ids: string[], opts: WebhookOptions) => {
      const wanted = triggerIds(id, ids)
      const results = await run(opts, (c, appId) => c.addWebhookTriggers(appId, id, wanted))
      const rows = [...results].map(([trigger, r]) => ({
        trigger,
        success: r.success,
        ...(r.message !== undefined ? { message: r.message } : {}),
        ...(r.code !== undefined ? { code: r.code } : {}),
      }))
      if (opts.json) {
        process.stdout.write(`${JSON.stringify(rows)}\n`)
      } else {
        printTable([['TRIGGER', 'RESULT'], ...rows.map((r) => [r.trigger, r.success ? 'added' : `not added: ${r.message ?? r.code ?? ''}`])])
      }
    })

  withHelp(withWebhookOptions(triggers.command('remove')), {
    exits: WEBHOOK_EXITS,
    examples: [['webhooks triggers remove hooks1 group_member_added', 'unsubscribe hooks1 from one trigger']],
  })
    .description('unsubscribe a webhook from triggers (all or nothing)')
    .argument('<id>', 'the webhook')
    .argument('<triggers...>', 'trigger ids')
    .addOption(jsonOption())
    .action(async (id: string, ids: string[], opts: WebhookOptions) => {
      const wanted = triggerIds(id, ids)
      const res = await run(opts, (c, appId) => c.removeWebhookTriggers(appId, id, wanted))
      if (opts.json) {
        process.stdout.write(`${JSON.stringify({ id, removed: wanted, ...res })}\n`)
      } else {
        process.stdout.write(`removed from ${id}: ${wanted.join(', ')}\n`)
      }
    })

  withHelp(withWebhookOptions(triggers.command('list')), {
    exits: WEBHOOK_EXITS,
    examples: [['webhooks triggers list hooks1 --app acme-chat --json', 'the triggers of hooks1 as a JSON array']],
  })
    .description("list a webhook's triggers")
    .argument('<id>', 'the webhook')
    .addOption(jsonOption())
    .action(async (id: string, opts: WebhookOptions) => {
      checked(() => parseWebhookInput('webhooks triggers list', WebhookId, id, ['id']))
      const list = await run(opts, (c, appId) => c.listWebhookTriggers(appId, id))
      if (opts.json) {
        process.stdout.write(`${JSON.stringify(list)}\n`)
      } else if (list.length === 0) {
        process.stdout.write(`${id} has no triggers: it receives nothing\n`)
      } else {
        printTable([['TRIGGER', 'DESCRIPTION'], ...list.map((t) => [t.id, t.description ?? ''])])
      }
    })

  registerWebhooksReceiveCommand(webhooks)
}
