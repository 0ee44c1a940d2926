/**
 * Who calls the chat interface, and its budget: authenticates the `apikey` and counts the request
 * against the app's chat limit (`chatRequestsPerMinute`, a sliding window apart from the
 * data-import limit). Documented (`articles/rate-limits.mdx`): over the limit the request is not
 * processed and answers 429 with `Retry-After` and the reset time; normal answers carry the limit
 * and what remains (sent here as `X-RateLimit-*`, the newer spelling, on every chat answer).
 */
import type { AppInfo } from './app-registry.ts'
import { authenticateApp } from './auth.ts'
import { type HeaderMap, HttpError, type RequestContext } from './http-kit.ts'
import { rateLimitHeaders } from './rate-limiter.ts'
import type { SandboxServices } from './sandbox-services.ts'

export interface ChatCaller {
  readonly app: AppInfo
  /** The rate-limit headers every answer to this request carries. */
  readonly headers: HeaderMap
}

/** The limiter key of an app's chat budget. */
export function chatLimiterKey(appId: string): string {
  return `chat:${appId}`
}

/** Counts one chat request of `app`; over the limit, throws the documented 429. */
export function takeChatSlot(services: SandboxServices, app: AppInfo): HeaderMap {
  const d = services.limiter.take(chatLimiterKey(app.id), app.settings.chatRequestsPerMinute, app.settings.windowMs)
  const headers = rateLimitHeaders(d)
  if (!d.allowed) {
    throw new HttpError(
      429,
      'ERR_TOO_MANY_REQUESTS',
      `Too many requests. ${d.limit} per minute is the maximum allowed. Please retry after ${d.retryAfterSeconds} seconds.`,
      { headers },
    )
  }
  return headers
}

/** Authenticates a chat request and counts it against the app's chat budget. */
export function chatCaller(services: SandboxServices, ctx: RequestContext): ChatCaller {
  const { app } = authenticateApp(ctx, services.registry)
  return { app, headers: takeChatSlot(services, app) }
}
