/**
 * Who may read the dashboard. On loopback (the default) anyone on the machine, as for `status`;
 * on any other address only a request carrying the token: `Authorization: Bearer <token>`, or
 * Basic auth with the token as password (what a browser asks for and then sends on every request
 * of the page). Compared in constant time; the token itself is never printed.
 */
import { timingSafeEqual } from 'node:crypto'
import type { IncomingMessage } from 'node:http'

export const TOKEN_ENV = 'CHATFERRY_DASHBOARD_TOKEN'
/** Shorter tokens are refused when the dashboard is exposed. */
export const MIN_TOKEN_LENGTH = 16

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host)
}

export function authorized(req: IncomingMessage, token: string | undefined): boolean {
  if (token === undefined) {
    return true
  }
  const header = req.headers.authorization ?? ''
  const [scheme, value = ''] = header.split(' ', 2)
  let offered: string | undefined
  if (scheme?.toLowerCase() === 'bearer') {
    offered = value
  } else if (scheme?.toLowerCase() === 'basic') {
    const decoded = Buffer.from(value, 'base64').toString('utf8')
    offered = decoded.slice(decoded.indexOf(':') + 1)
  }
  return offered !== undefined && same(offered, token)
}

function same(a: string, b: string): boolean {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}
