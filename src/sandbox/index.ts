/**
 * The sandbox: a local emulator of the target platform's management, chat and data-import
 * interfaces, backed by Postgres (a server, or embedded PGlite), for demos, tests and benchmarks.
 * It enforces every documented rule, chooses the stricter behaviour where the documentation is
 * silent, and can inject the faults the real platform is known to produce. See README.md beside
 * this file.
 *
 * URL layout: the management interface at the root (`/apps…`), each app's chat and data-import
 * interfaces under `/apps/<appId>/v3/…` (and `/v3.0/…`), sandbox-only knobs under `/sandbox/…`.
 */
import type { AddressInfo } from 'node:net'

import { type Logger, pino } from 'pino'

import type { DatabaseLocation } from '../db.ts'
import { isLoopbackHost } from '../target/transport.ts'
import { type CreateAppInput, createAppRegistry, type Region } from './app-registry.ts'
import { applySettingsPatch, type AppSettings, type AppSettingsPatch, DEFAULT_APP_SETTINGS } from './app-settings.ts'
import type { ManagementCredentials } from './auth.ts'
import { chatRoutes } from './chat-routes.ts'
import { chatWriteRoutes } from './chat-write-route.ts'
import { createFaultInjector } from './fault-injector.ts'
import { groupWriteSpecs } from './group-write-routes.ts'
import { importRoutes } from './import-routes.ts'
import { createManagementFaults, type ManagementFaults, type ManagementFaultSettings } from './management-faults.ts'
import { managementRoutes } from './management-routes.ts'
import { memberWriteSpecs } from './member-write-routes.ts'
import { messageWriteSpecs } from './message-write-routes.ts'
import { createRateLimiter } from './rate-limiter.ts'
import { createRequestLog, type RequestLogEntry } from './request-log.ts'
import { createRouter } from './router.ts'
import { type DeliveryLogEntry, listDeliveries, sandboxRoutes, updateAppSettings } from './sandbox-routes.ts'
import type { SandboxServices } from './sandbox-services.ts'
import { openSandboxStore, type SandboxDb } from './sandbox-store.ts'
import { createSandboxServer, DEFAULT_MAX_BODY_BYTES } from './server.ts'
import { userWriteSpecs } from './user-write-routes.ts'
import { createWebhookDispatcher } from './webhook-dispatcher.ts'

export type { CreateAppInput, Region } from './app-registry.ts'
export type { AppSettings, AppSettingsPatch, FaultSettings } from './app-settings.ts'
export { DEFAULT_APP_SETTINGS } from './app-settings.ts'
export type { ManagementCall, ManagementFaults, ManagementFaultSettings } from './management-faults.ts'
export type { RequestLogEntry } from './request-log.ts'
export type { DeliveryLogEntry } from './sandbox-routes.ts'
export type { SandboxDatabase, SandboxDb } from './sandbox-store.ts'

/** Loopback only, unless asked otherwise. */
export const DEFAULT_SANDBOX_HOST = '127.0.0.1'
/** Default `key` header of the management interface. */
export const DEFAULT_MANAGEMENT_KEY = 'sandbox-key'
/** Default `secret` header of the management interface. */
export const DEFAULT_MANAGEMENT_SECRET = 'sandbox-secret'

/** Options of {@link startSandbox}; all optional. */
export interface SandboxOptions {
  /** Interface to listen on. @default '127.0.0.1' */
  readonly host?: string
  /** Port; 0 picks a free one. @default 0 */
  readonly port?: number
  /** Where the sandbox keeps its data (schema `sandbox`). @default { dir: 'memory://' } (embedded, in memory) */
  readonly state?: DatabaseLocation
  /** Credentials of the management interface. @default { key: 'sandbox-key', secret: 'sandbox-secret' } */
  readonly management?: ManagementCredentials
  /** Settings of every app created from now on, on top of {@link DEFAULT_APP_SETTINGS}. */
  readonly defaults?: AppSettingsPatch
  /** Apps to create (or, when they exist in a persistent store, reuse) at start. */
  readonly apps?: readonly CreateAppInput[]
  /** Largest request body accepted, in bytes. @default 4 MiB */
  readonly maxBodyBytes?: number
  /** Listening on a non-loopback address exposes the sandbox to the network; it must be asked for. @default false */
  readonly allowNonLoopback?: boolean
  /** @default a silent logger */
  readonly logger?: Logger
  /**
   * Active apps beyond which `POST /apps` is refused (`ERR_APP_CREATION_FAILED_MAX_LIMIT`); apps
   * created in-process or with `--app` count but are never refused. The platform's number is not
   * published. @default 5 (assumed)
   */
  readonly maxApps?: number
  /** The management interface's 429s (management-faults.ts). @default none */
  readonly managementFaults?: Partial<ManagementFaultSettings>
  /** Days a deleted app stays archived (`ERR_APP_ARCHIVED`) before it is removed; fractions allowed. @default 30 (documented) */
  readonly archiveDays?: number
}

/** Assumed: the platform does not publish how many complimentary apps an account may have. */
export const DEFAULT_MAX_APPS = 5

/** An app as {@link Sandbox.createApp} returns it. */
export interface SandboxApp {
  readonly id: string
  readonly region: Region
  /** The fullAccess REST API key. */
  readonly apiKey: string
  /** The authOnly key. */
  readonly authKey: string
  /** Base URL of its chat and data-import interfaces, e.g. `http://127.0.0.1:4010/apps/<id>/v3`. */
  readonly baseUrl: string
  /** The management interface's app record. */
  readonly record: Record<string, unknown>
}

/** A running sandbox. */
export interface Sandbox {
  /** e.g. `http://127.0.0.1:4010` — also the management interface's URL. */
  readonly url: string
  readonly port: number
  /** The store (schema `sandbox`), for tests and inspection. */
  readonly store: SandboxDb
  createApp(input?: CreateAppInput): Promise<SandboxApp>
  /** Reads an app's settings, after applying `patch` when given. */
  settings(appId: string, patch?: AppSettingsPatch): Promise<AppSettings>
  /** The data-import request log of an app, oldest first. */
  requests(appId: string): Promise<(RequestLogEntry & { id: number })[]>
  /** The webhook delivery log of an app, oldest first. */
  deliveries(appId: string): Promise<DeliveryLogEntry[]>
  /** The management interface's fault setting and its call log (every call, account-wide). */
  readonly management: ManagementFaults
  /** Resolves when no webhook delivery is queued or in flight and the request log is written. */
  whenIdle(): Promise<void>
  /** Stops listening, ends open connections, aborts webhook deliveries and closes the store. */
  close(): Promise<void>
}

/** Opens (and migrates) the store, loads its apps, creates `options.apps` and starts listening. */
export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const host = options.host ?? DEFAULT_SANDBOX_HOST
  if (!isLoopbackHost(host) && !options.allowNonLoopback) {
    throw new Error(`the sandbox listens only on loopback addresses unless asked explicitly; got host ${host}`)
  }
  const logger = options.logger ?? pino({ level: 'silent' })
  const defaults = options.defaults ? applySettingsPatch(DEFAULT_APP_SETTINGS, options.defaults) : { ...DEFAULT_APP_SETTINGS }
  const store = await openSandboxStore(options.state ?? { dir: 'memory://' })
  const db = store.db
  try {
    const registry = createAppRegistry(db, defaults, options.archiveDays)
    await registry.load()
    const services: SandboxServices = {
      db,
      registry,
      limiter: createRateLimiter(),
      faults: createFaultInjector(),
      webhooks: createWebhookDispatcher(db, logger),
      requestLog: createRequestLog(db, logger),
      logger,
      management: options.management ?? { key: DEFAULT_MANAGEMENT_KEY, secret: DEFAULT_MANAGEMENT_SECRET },
      maxApps: options.maxApps ?? DEFAULT_MAX_APPS,
    }
    const management = createManagementFaults(services.management, options.managementFaults)
    const router = createRouter([
      ...managementRoutes(services).map(management.guard),
      ...importRoutes(services),
      ...chatRoutes(services),
      ...chatWriteRoutes(services, [
        ...userWriteSpecs(services),
        ...groupWriteSpecs(services),
        ...memberWriteSpecs(services),
        ...messageWriteSpecs(services),
      ]),
      ...sandboxRoutes(services),
    ])
    const server = createSandboxServer({ router, logger, maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES })
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(options.port ?? 0, host, () => {
        server.off('error', reject)
        resolve()
      })
    })
    const port = (server.address() as AddressInfo).port
    const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`

    async function createApp(input: CreateAppInput = {}): Promise<SandboxApp> {
      const app = await registry.create(input)
      const keys = registry.keysOf(app.id)
      const full =
        (input.apiKey !== undefined ? keys.find((k) => k.apiKey === input.apiKey) : undefined) ?? keys.find((k) => k.scope === 'fullAccess')
      const auth =
        (input.authKey !== undefined ? keys.find((k) => k.apiKey === input.authKey) : undefined) ?? keys.find((k) => k.scope === 'authOnly')
      return {
        id: app.id,
        region: app.region,
        apiKey: full?.apiKey ?? '',
        authKey: auth?.apiKey ?? '',
        baseUrl: `${url}/apps/${app.id}/v3`,
        record: registry.record(app),
      }
    }
    for (const app of options.apps ?? []) {
      await createApp(app)
    }

    let closing: Promise<void> | undefined
    return {
      url,
      port,
      store: db,
      createApp,
      management: management.faults,
      async settings(appId, patch) {
        const app = registry.get(appId)
        if (!app) {
          throw new Error(`the sandbox has no app ${appId}`)
        }
        return patch === undefined ? app.settings : updateAppSettings(services, appId, patch)
      },
      requests: (appId) => services.requestLog.list(appId),
      deliveries: (appId) => listDeliveries(db, appId),
      async whenIdle() {
        await services.webhooks.whenIdle()
        await services.requestLog.flush()
      },
      close() {
        closing ??= (async () => {
          await new Promise<void>((resolve) => {
            server.close(() => resolve())
            server.closeAllConnections()
          })
          await services.webhooks.close()
          await services.requestLog.flush()
          await store.close()
        })()
        return closing
      },
    }
  } catch (err) {
    await store.close()
    throw err
  }
}
