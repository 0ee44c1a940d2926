/**
 * Authentication of the two kinds of caller (documented, facts §1.1, §4.2, §6):
 * - the management interface: headers `key` and `secret` on every request;
 * - an app's chat and data-import interfaces: header `apikey`, a key of that app; data import
 *   and the chat lists need a `fullAccess` key.
 */
import { createHash, timingSafeEqual } from 'node:crypto'

import type { ApiKeyInfo, AppInfo, AppRegistry } from './app-registry.ts'
import { header, HttpError, type RequestContext } from './http-kit.ts'

/** The `key` and `secret` headers the management interface expects. */
export interface ManagementCredentials {
  readonly key: string
  readonly secret: string
}

function sameSecret(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a).digest()
  const hb = createHash('sha256').update(b).digest()
  return timingSafeEqual(ha, hb)
}

/**
 * Checks the management headers. Missing → 401 `AUTH_ERR_EMPTY_AUTH_HEADER` (the code the error
 * guide gives for the management APIs); wrong → 401 `AUTH_ERR_APIKEY_NOT_FOUND` (assumed: the
 * management error codes are not documented, gap 10).
 */
export function authenticateManagement(ctx: RequestContext, credentials: ManagementCredentials): void {
  const key = header(ctx, 'key')
  const secret = header(ctx, 'secret')
  if (!key || !secret) {
    throw new HttpError(401, 'AUTH_ERR_EMPTY_AUTH_HEADER', 'The management interface needs the headers key and secret.')
  }
  const keyOk = sameSecret(key, credentials.key)
  const secretOk = sameSecret(secret, credentials.secret)
  if (!keyOk || !secretOk) {
    throw new HttpError(401, 'AUTH_ERR_APIKEY_NOT_FOUND', 'The management key and secret do not match.')
  }
}

/**
 * A deleted app is archived for 30 days: every call naming it answers `ERR_APP_ARCHIVED`
 * (documented code and words; which calls answer it, and the HTTP status, are assumed: all, 403).
 */
export function throwIfArchived(registry: AppRegistry, appId: string): void {
  if (registry.archivedUntil(appId) !== undefined) {
    throw new HttpError(403, 'ERR_APP_ARCHIVED', `The app ${appId} has been archived and will be permanently deleted after 30 days.`)
  }
}

/** Who called an app interface: the app and the key used. */
export interface AppCaller {
  readonly app: AppInfo
  readonly key: ApiKeyInfo
}

/**
 * Checks an app-interface request: the app in the path must exist (401 `AUTH_ERR_INVALID_APPID`),
 * the `apikey` header must be present (401 `AUTH_ERR_EMPTY_APIKEY`) and be a key of that app
 * (401 `AUTH_ERR_APIKEY_NOT_FOUND`, also for another app's key), with `fullAccess` scope
 * (403 `AUTH_ERR_NO_ACCESS`).
 */
export function authenticateApp(ctx: RequestContext, registry: AppRegistry): AppCaller {
  const appId = ctx.params.appId ?? ''
  const app = registry.get(appId)
  if (app === undefined) {
    throwIfArchived(registry, appId)
    throw new HttpError(401, 'AUTH_ERR_INVALID_APPID', `The app ${appId} does not exist or has been deleted.`)
  }
  const apiKey = header(ctx, 'apikey')
  if (!apiKey) {
    throw new HttpError(401, 'AUTH_ERR_EMPTY_APIKEY', 'The apikey header is missing.')
  }
  const key = registry.key(apiKey)
  if (key === undefined || key.appId !== app.id) {
    throw new HttpError(401, 'AUTH_ERR_APIKEY_NOT_FOUND', 'The API key is not a key of this app.')
  }
  if (key.scope !== 'fullAccess') {
    throw new HttpError(403, 'AUTH_ERR_NO_ACCESS', 'This operation needs an API key with fullAccess scope.')
  }
  return { app, key }
}
