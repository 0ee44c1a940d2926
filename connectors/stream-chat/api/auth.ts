/**
 * Stream Chat server-side authentication: every request carries the app's API key as the
 * `api_key` query parameter and a server token — a JWT signed with the app's secret (HS256) whose
 * payload is `{"server": true}` — in `Authorization`, with `stream-auth-type: jwt`. The key and
 * secret come from the environment (the variables the configuration names) and are never logged.
 */
import { createHmac } from 'node:crypto'

const b64url = (s: string | Buffer) => Buffer.from(s).toString('base64url')

/** A server token for an app secret. */
export function serverToken(secret: string): string {
  const head = b64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }))
  const body = b64url(JSON.stringify({ server: true }))
  const sig = createHmac('sha256', secret).update(`${head}.${body}`).digest('base64url')
  return `${head}.${body}.${sig}`
}

export interface StreamCredentials {
  readonly apiKey: string
  readonly token: string
}
