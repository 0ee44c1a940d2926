/**
 * What `chatferry dashboard` and `chatferry fleet dashboard` share: their listening flags checked
 * together (every problem at once, before anything opens: an exposed address needs a token), and
 * serving a sampler's view until SIGINT/SIGTERM, the token never printed.
 */
import type { Command } from 'commander'

import { UsageError } from '../usage-error.ts'
import { isLoopback, MIN_TOKEN_LENGTH, TOKEN_ENV } from './auth.ts'
import { startDashboardServer } from './server.ts'

export interface ServeFlags {
  host: string
  port: string
  refresh: string
}

export interface ServeSettings {
  readonly host: string
  readonly port: number
  readonly refreshMs: number
  readonly token?: string
}

/** Adds --host, --port and --refresh. */
export function addServeOptions(cmd: Command): Command {
  return cmd
    .option('--host <address>', 'address to listen on', '127.0.0.1')
    .option('--port <n>', 'port to listen on (0: any free port)', '8417')
    .option('--refresh <seconds>', 'how often the ledger is read and the page redraws', '2')
}

/** The flags and CHATFERRY_DASHBOARD_TOKEN checked; a UsageError listing every problem. */
export function serveSettings(opts: ServeFlags, env: NodeJS.ProcessEnv = process.env): ServeSettings {
  const port = Number(opts.port)
  const refresh = Number(opts.refresh)
  const problems: string[] = []
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    problems.push(`--port must be a port number, not ${opts.port}`)
  }
  if (!(refresh >= 0.5 && refresh <= 3600)) {
    problems.push(`--refresh must be between 0.5 and 3600 seconds, not ${opts.refresh}`)
  }
  const token = env[TOKEN_ENV] || undefined
  if (!isLoopback(opts.host) && (token === undefined || token.length < MIN_TOKEN_LENGTH)) {
    problems.push(
      `--host ${opts.host} exposes the dashboard beyond this machine: set ${TOKEN_ENV} to a token of at least ${MIN_TOKEN_LENGTH} characters`,
    )
  }
  if (problems.length > 0) {
    throw new UsageError(problems.join('; '))
  }
  return { host: opts.host, port, refreshMs: refresh * 1000, ...(token !== undefined ? { token } : {}) }
}

/** Serves `page` over `view` until a signal; `what` names the dashboard in the line printed when listening. */
export async function serveUntilStopped(
  settings: ServeSettings,
  what: string,
  page: { html: string; js: string },
  view: () => object | undefined,
): Promise<void> {
  const server = await startDashboardServer({ ...settings, page, view })
  process.stderr.write(`dashboard of ${what} at ${server.url}${settings.token !== undefined ? ' (token required)' : ''} — Ctrl-C stops it\n`)
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve)
    process.once('SIGTERM', resolve)
  })
  await server.close()
}
