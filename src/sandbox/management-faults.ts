/**
 * The management interface's rate limit as a fault setting, and the log of every management
 * call (account-wide, unlike the per-app request log: `GET /apps` names no app). A call refused
 * with a 429 is not processed. The platform publishes neither the management interface's limit
 * nor the form of its 429 (facts §7 gap 10): the answer here is assumed to be the data-import
 * interface's documented one — `ERR_TOO_MANY_REQUESTS`, the wait only in the text ("…Please retry
 * for seconds after N."), no `Retry-After` (the stricter reading: a client must read the text).
 */
import { type Random, seededRandom } from '../lib.ts'
import { authenticateManagement, type ManagementCredentials } from './auth.ts'
import { HttpError, type Reply, type RequestContext } from './http-kit.ts'
import type { Route } from './router.ts'

/** The management fault setting. */
export interface ManagementFaultSettings {
  /** Probability that an authenticated management call is answered 429 (not processed). @default 0 */
  readonly rate429: number
  /** The wait the 429's text names, in seconds. @default 1 */
  readonly retryAfterSeconds: number
  /** Seed of the dice, for a storm that is the same on every run. */
  readonly seed?: number
}

/** One management call as it reached the sandbox. */
export interface ManagementCall {
  readonly method: string
  readonly path: string
  readonly status: number
  readonly receivedAtMs: number
}

export interface ManagementFaults {
  /** Changes the setting (and restarts the dice when a seed is given). */
  set(patch: Partial<ManagementFaultSettings>): void
  /** Every management call so far, oldest first. */
  calls(): readonly ManagementCall[]
}

/** The faults and the call log, and the wrapper that applies them to the management routes. */
export function createManagementFaults(credentials: ManagementCredentials, initial: Partial<ManagementFaultSettings> = {}) {
  let settings: ManagementFaultSettings = { rate429: 0, retryAfterSeconds: 1, ...initial }
  let random: Random = settings.seed === undefined ? Math.random : seededRandom(settings.seed)
  const log: ManagementCall[] = []
  const faults: ManagementFaults = {
    set(patch) {
      settings = { ...settings, ...patch }
      if (patch.seed !== undefined) {
        random = seededRandom(patch.seed)
      }
    },
    calls: () => [...log],
  }
  const record = (ctx: RequestContext, status: number) => log.push({ method: ctx.method, path: ctx.path, status, receivedAtMs: ctx.receivedAtMs })

  /** The route with its call logged and, once authenticated, its 429 drawn before it runs. */
  function guard(route: Route): Route {
    return {
      ...route,
      handler: async (ctx): Promise<Reply> => {
        try {
          authenticateManagement(ctx, credentials)
          if (settings.rate429 > 0 && random() < settings.rate429) {
            throw new HttpError(
              429,
              'ERR_TOO_MANY_REQUESTS',
              `Too many requests to the management interface. Please retry for seconds after ${settings.retryAfterSeconds}.`,
            )
          }
          const reply = await route.handler(ctx)
          record(ctx, 'status' in reply ? reply.status : 0)
          return reply
        } catch (err) {
          record(ctx, err instanceof HttpError ? err.status : 500)
          throw err
        }
      },
    }
  }
  return { faults, guard }
}
