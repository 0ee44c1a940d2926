import { createRequire } from 'node:module'

import { type Logger, pino } from 'pino'
import type * as PinoPretty from 'pino-pretty'

import { writeToTerminal } from './terminal-output.ts'

/** How log lines look: `pretty` (one human line each) or `json` (one JSON object each). */
export type LogFormat = 'pretty' | 'json'
export const LOG_FORMATS: readonly LogFormat[] = ['pretty', 'json']

let chosenFormat: LogFormat | undefined

/** The format every logger created after this call uses (`--log-format`); undefined: decide by environment. */
export function setLogFormat(format: LogFormat | undefined): void {
  chosenFormat = format
}

/**
 * `--log-format`, else `$CHATFERRY_LOG_FORMAT`, else pretty when stderr is a terminal and JSON
 * otherwise (schedulers and log shippers read JSON).
 */
export function logFormat(env: NodeJS.ProcessEnv = process.env, tty = process.stderr.isTTY === true): LogFormat {
  if (chosenFormat) {
    return chosenFormat
  }
  const fromEnv = env.CHATFERRY_LOG_FORMAT
  if (fromEnv === 'pretty' || fromEnv === 'json') {
    return fromEnv
  }
  return tty ? 'pretty' : 'json'
}

/**
 * Keys whose values are secrets wherever they appear: in a log object, a config, a report
 * (`fileToken`: the Slack token the files lane reads `url_private` with; `secretAccessKey`: an S3
 * source's or store's secret key).
 */
export const SECRET_KEYS: ReadonlySet<string> = new Set([
  'apiKey',
  'apikey',
  'key',
  'secret',
  'password',
  'authKey',
  'token',
  'apiToken',
  'fileToken',
  'secretAccessKey',
])

/**
 * Where pino looks for secrets in a log object (top level and one level down, plus request
 * headers); it writes `[redacted]` instead.
 */
export const REDACTED_PATHS = [
  ...[...SECRET_KEYS].flatMap((k) => [k, `*.${k}`]),
  ...['apikey', 'secret', 'authorization', 'api-token'].flatMap((h) => [`headers.${h}`, `*.headers.${h}`]),
]

/** What a child logger is about; every line it writes carries these fields. */
export interface LogScope {
  runId?: string
  jobId?: string
  entity?: string
  batch?: string
  component?: string
}

export function createLogger(options: { level?: string; destination?: NodeJS.WritableStream; format?: LogFormat } = {}): Logger {
  const level = options.level ?? process.env.CHATFERRY_LOG_LEVEL ?? 'info'
  const format = options.format ?? logFormat()
  // Redaction happens in pino, before a line is serialised: both formats get the censored object.
  const opts = { level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' }, base: { pid: process.pid } }
  const write = options.destination ? (s: string) => void options.destination?.write(s) : writeToTerminal
  if (format === 'json') {
    return pino(opts, { write })
  }
  // Required here, not imported: a process logging JSON (every scheduled run) never loads it.
  const { prettyFactory } = createRequire(import.meta.url)('pino-pretty') as typeof PinoPretty
  const pretty = prettyFactory({
    colorize: options.destination === undefined && process.stderr.isTTY === true,
    translateTime: 'SYS:HH:MM:ss',
    ignore: 'pid,hostname',
    singleLine: true,
  })
  // Formatted synchronously, line by line, so a line never lands in the middle of a progress redraw.
  return pino(opts, { write: (line: string) => write(pretty(line)) })
}

/** Removes the password from a connection URL so it can be printed. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url)
    if (u.password) {
      u.password = '***'
    }
    return u.toString()
  } catch {
    return url.replace(/\/\/([^:/@]+):[^@]*@/, '//$1:***@')
  }
}

/**
 * A copy of a configuration (or part of one) with every secret replaced by `<secret>` and URL
 * credentials replaced by `***`, keys sorted (so equal settings serialise, and hash, the same). For
 * printing a configuration and for the config hash of reports. `policies` holds no secrets, only
 * choices whose names can look like secret keys (`groupTypes.password`, `legacyMetadata.key`):
 * they are kept, so they show and count in the hash.
 */
export function withoutSecrets(value: unknown, path: readonly string[] = []): unknown {
  const key = path.at(-1) ?? ''
  if (path[0] !== 'policies' && SECRET_KEYS.has(key) && value !== undefined && value !== null) {
    return '<secret>'
  }
  // A notification hook's URL is its own key (a Slack webhook's path), its headers carry tokens.
  if (path[0] === 'notify' && path[1] === 'hooks' && path.length === 4 && (key === 'url' || key === 'headers')) {
    return '<secret>'
  }
  if (typeof value === 'string') {
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) {
      try {
        const u = new URL(value)
        if (u.username || u.password) {
          u.username = u.username ? '***' : ''
          u.password = u.password ? '***' : ''
          return u.toString()
        }
      } catch {
        return redactUrl(value)
      }
    }
    return value
  }
  if (Array.isArray(value)) {
    return value.map((v, i) => withoutSecrets(v, [...path, String(i)]))
  }
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {}
    for (const k of Object.keys(value).sort()) {
      out[k] = withoutSecrets((value as Record<string, unknown>)[k], [...path, k])
    }
    return out
  }
  return value
}
