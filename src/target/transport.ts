/**
 * The transport rule for every request that carries credentials: HTTPS anywhere, plain HTTP only to
 * this machine's loopback interface (the sandbox). Checked when the config is read and again by the
 * HTTP layer before each request, so no code path can send an API key in clear over a network.
 */
import { isIP } from 'node:net'

const LOOPBACK_HOSTS = new Set(['localhost', '[::1]', '::1'])

/** True when `hostname` names this machine's loopback interface (127.0.0.0/8, ::1, localhost). */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase()
  if (LOOPBACK_HOSTS.has(host) || host.endsWith('.localhost')) {
    return true
  }
  if (isIP(host) === 4) {
    return host.startsWith('127.')
  }
  return false
}

/**
 * Why `url` may not carry credentials, or undefined when it may. The answer names the host and the
 * fix, never the URL's user info, query or path.
 */
export function transportProblem(url: URL): string | undefined {
  if (url.protocol === 'https:') {
    return undefined
  }
  if (url.protocol === 'http:') {
    if (isLoopbackHost(url.hostname)) {
      return undefined
    }
    return `plain http:// is only allowed for loopback addresses (127.0.0.1, ::1, localhost); use https:// for ${url.hostname}`
  }
  return `expected an http(s) URL, got protocol ${url.protocol}`
}
