import { pino, type Logger } from 'pino'

/**
 * Keys whose values are secrets wherever they appear in a log object. pino replaces them with
 * `[redacted]` before the line is written.
 */
export const REDACTED_PATHS = [
  'apiKey',
  'apikey',
  'key',
  'secret',
  'password',
  '*.apiKey',
  '*.apikey',
  '*.key',
  '*.secret',
  '*.password',
  'headers.apikey',
  'headers.secret',
  'headers.authorization',
  '*.headers.apikey',
  '*.headers.secret',
  '*.headers.authorization',
]

/** What a child logger is about; every line it writes carries these fields. */
export interface LogScope {
  runId?: string
  jobId?: string
  entity?: string
  batch?: string
  component?: string
}

export function createLogger(options: { level?: string; destination?: NodeJS.WritableStream } = {}): Logger {
  const level = options.level ?? process.env.CHATFERRY_LOG_LEVEL ?? 'info'
  return pino(
    { level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' }, base: { pid: process.pid } },
    (options.destination ?? process.stderr) as pino.DestinationStream,
  )
}

/** Removes the password from a connection URL so it can be printed. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url)
    if (u.password) u.password = '***'
    return u.toString()
  } catch {
    return url.replace(/\/\/([^:/@]+):[^@]*@/, '//$1:***@')
  }
}
