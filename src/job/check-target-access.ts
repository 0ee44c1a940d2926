/**
 * The pre-flight of `chatferry run`, before any source read: the part of `plan --check-target`
 * (src/report/target-check.ts) that decides whether loading can work at all — the API key opens
 * the app's chat interface with full access, and the region the base URL names (if it names one)
 * is the configured one. One paced-free read (`GET users?perPage=1`), nothing written.
 *
 * A refusal a rerun cannot fix (401/403/404, a redirect, an insecure URL) is `refused`, with the
 * configuration key to fix; a platform that cannot be reached or answers 429/5xx is `unavailable`
 * (the run goes on: extraction needs no platform, and the loader's outage rule takes over).
 */
import { redactUrl } from '../logger.ts'
import { regionOfBaseUrl } from '../report/target-check.ts'
import { createPlatformClient, type PlatformClient } from '../target/client.ts'
import { PlatformError } from '../target/errors.ts'
import type { ResolvedConfig } from './config.ts'

export type TargetAccess =
  | { readonly status: 'ok' }
  | { readonly status: 'refused'; readonly message: string; readonly fix: string }
  /** `answered`: false when no answer came at all (DNS, connection, timeout), true for a 429/5xx. */
  | { readonly status: 'unavailable'; readonly message: string; readonly answered: boolean }

function reason(err: PlatformError): string {
  return `${err.code}${err.status !== undefined ? ` (HTTP ${err.status})` : ''}: ${err.message.replace(/^.*?: [A-Za-z_]+: /, '')}`
}

export async function checkTargetAccess(
  config: Pick<ResolvedConfig, 'target'>,
  options: { readonly client?: PlatformClient; readonly signal?: AbortSignal } = {},
): Promise<TargetAccess> {
  const t = config.target
  const observed = regionOfBaseUrl(t.baseUrl)
  if (observed !== undefined && observed !== t.region) {
    return {
      status: 'refused',
      message: `target.baseUrl ${redactUrl(t.baseUrl)} is in region ${observed}, the configuration says ${t.region}`,
      fix: 'fix target.region (or target.baseUrl)',
    }
  }
  const client = options.client ?? createPlatformClient({ baseUrl: t.baseUrl, apiKey: t.apiKey, timeoutMs: t.timeoutMs })
  try {
    await client.listUsers({ perPage: 1 }, options.signal)
    return { status: 'ok' }
  } catch (err) {
    if (!(err instanceof PlatformError)) {
      throw err
    }
    if (err.retryable) {
      return {
        status: 'unavailable',
        message: `the platform at ${redactUrl(t.baseUrl)} did not answer the pre-flight: ${reason(err)}`,
        answered: err.status !== undefined,
      }
    }
    if (err.code === 'AUTH_ERR_INVALID_APPID' || err.status === 404) {
      return {
        status: 'refused',
        message: `the platform does not know app ${t.appId} at ${redactUrl(t.baseUrl)}: ${reason(err)}`,
        fix: 'fix target.appId (or target.baseUrl, target.region)',
      }
    }
    if (err.status === 401 || err.status === 403) {
      return {
        status: 'refused',
        message: `the platform refused the API key for app ${t.appId}: ${reason(err)}`,
        fix: err.status === 403 ? 'fix target.apiKey (data import needs a REST API key with fullAccess scope)' : 'fix target.apiKey',
      }
    }
    return {
      status: 'refused',
      message: `the platform at ${redactUrl(t.baseUrl)} refused the pre-flight for app ${t.appId}: ${reason(err)}`,
      fix: 'fix target.baseUrl',
    }
  }
}
