/** What every sandbox handler works with: the store, the app registry and the in-memory parts. */
import type { Logger } from 'pino'

import type { AppRegistry } from './app-registry.ts'
import type { ManagementCredentials } from './auth.ts'
import type { FaultInjector } from './fault-injector.ts'
import type { RateLimiter } from './rate-limiter.ts'
import type { RequestLog } from './request-log.ts'
import type { SandboxDb } from './sandbox-store.ts'
import type { WebhookDispatcher } from './webhook-dispatcher.ts'

/** The shared parts of a running sandbox. */
export interface SandboxServices {
  readonly db: SandboxDb
  readonly registry: AppRegistry
  /** Data-import budget per app (key: app id) and chat budget (key: `chat:<app id>`). */
  readonly limiter: RateLimiter
  readonly faults: FaultInjector
  readonly webhooks: WebhookDispatcher
  readonly requestLog: RequestLog
  readonly logger: Logger
  readonly management: ManagementCredentials
  /** Active apps beyond which `POST /apps` answers `ERR_APP_CREATION_FAILED_MAX_LIMIT`. */
  readonly maxApps: number
}

/** The two documented path prefixes of the app interfaces (`/v3` and the older `/v3.0`). */
export const API_VERSIONS = ['v3', 'v3.0'] as const
