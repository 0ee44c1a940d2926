/**
 * Webhook delivery. Documented (spec §2.2, §6): a JSON POST of `{trigger, data, appId, region,
 * webhook}` to the webhook's URL, with HTTP Basic auth when `useBasicAuth`; a disabled webhook
 * receives nothing. Not documented, so chosen here: how a webhook selects triggers (its `triggers`
 * list, all when absent), retries (up to `webhookMaxAttempts`, on network errors and non-2xx),
 * the timeout (`webhookTimeoutMs`) and ordering (none guaranteed). Deliveries run in the
 * background, never block or fail the request that caused them, and are logged in
 * `webhook_deliveries`.
 */
import PQueue from 'p-queue'
import type { Logger } from 'pino'
import type { WebhookTrigger } from '../target/schemas.ts'
import { isLoopbackHost } from '../target/transport.ts'
import type { AppInfo } from './app-registry.ts'
import type { SandboxDb } from './sandbox-store.ts'

/** One event to deliver to every matching webhook of an app. */
export interface WebhookEvent {
  readonly trigger: WebhookTrigger
  readonly data: Record<string, unknown>
}

/** Queues and delivers webhook events. */
export interface WebhookDispatcher {
  /** Queues the events; returns at once. */
  dispatch(app: AppInfo, events: readonly WebhookEvent[]): void
  /** Resolves when every queued delivery has finished (delivered or given up). */
  whenIdle(): Promise<void>
  /** Aborts deliveries in flight and waits for the queue to drain. */
  close(): Promise<void>
}

const CONCURRENCY = 8

/**
 * Documented: the URL must be HTTPS. The sandbox also allows plain HTTP to a loopback address, so
 * a local receiver can be used in tests. Returns the problem, or undefined when the URL is fine.
 */
export function webhookUrlProblem(value: string): string | undefined {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return 'is not a valid URL'
  }
  if (url.protocol === 'https:') {
    return undefined
  }
  if (url.protocol === 'http:' && isLoopbackHost(url.hostname)) {
    return undefined
  }
  if (url.protocol === 'http:') {
    return 'must use https:// (plain http:// is allowed only for loopback addresses such as 127.0.0.1)'
  }
  return `must be an https:// URL, got ${url.protocol}`
}

/** A dispatcher delivering at most 8 requests at a time. */
export function createWebhookDispatcher(db: SandboxDb, logger: Logger): WebhookDispatcher {
  const queue = new PQueue({ concurrency: CONCURRENCY })
  const aborter = new AbortController()

  async function deliver(
    app: AppInfo,
    hook: { id: string; webhook_url: string; use_basic_auth: boolean; username: string | null; password: string | null },
    event: WebhookEvent,
  ) {
    const payload = { trigger: event.trigger, data: event.data, appId: app.id, region: app.region, webhook: hook.id }
    const row = await db
      .insertInto('webhook_deliveries')
      .values({
        app_id: app.id,
        webhook_id: hook.id,
        trigger: event.trigger,
        payload: JSON.stringify(payload),
        status: 'pending',
        http_status: null,
        attempts: 0,
        last_error: null,
        created_at_ms: Date.now(),
        finished_at_ms: null,
      })
      .returning('id')
      .executeTakeFirstOrThrow()
    const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': 'chatferry-sandbox' }
    if (hook.use_basic_auth) {
      headers.authorization = `Basic ${Buffer.from(`${hook.username ?? ''}:${hook.password ?? ''}`).toString('base64')}`
    }
    const { webhookMaxAttempts, webhookTimeoutMs } = app.settings
    let attempts = 0
    let httpStatus: number | null = null
    let lastError: string | null = null
    let delivered = false
    while (attempts < webhookMaxAttempts && !aborter.signal.aborted) {
      attempts++
      try {
        const res = await fetch(hook.webhook_url, {
          method: 'POST',
          headers,
          body: JSON.stringify(payload),
          signal: AbortSignal.any([aborter.signal, AbortSignal.timeout(webhookTimeoutMs)]),
          redirect: 'manual',
        })
        httpStatus = res.status
        await res.body?.cancel().catch(() => {})
        if (res.ok) {
          delivered = true
          lastError = null
          break
        }
        lastError = `HTTP ${res.status}`
      } catch (err) {
        lastError = (err as Error).name === 'TimeoutError' ? `no answer within ${webhookTimeoutMs} ms` : ((err as Error).message ?? String(err))
      }
      if (attempts < webhookMaxAttempts) {
        await new Promise((r) => setTimeout(r, 100 * attempts))
      }
    }
    await db
      .updateTable('webhook_deliveries')
      .set({ status: delivered ? 'delivered' : 'failed', http_status: httpStatus, attempts, last_error: lastError, finished_at_ms: Date.now() })
      .where('id', '=', row.id)
      .execute()
  }

  return {
    dispatch(app, events) {
      if (events.length === 0 || aborter.signal.aborted) {
        return
      }
      void queue
        .add(async () => {
          const hooks = await db
            .selectFrom('webhooks')
            .select(['id', 'webhook_url', 'use_basic_auth', 'username', 'password', 'triggers'])
            .where('app_id', '=', app.id)
            .where('enabled', '=', true)
            .orderBy('seq')
            .execute()
          for (const hook of hooks) {
            const triggers = hook.triggers as string[] | null
            for (const event of events) {
              if (triggers !== null && !triggers.includes(event.trigger)) {
                continue
              }
              void queue.add(() => deliver(app, hook, event)).catch((err: unknown) => logger.warn({ err, appId: app.id }, 'webhook delivery failed'))
            }
          }
        })
        .catch((err: unknown) => logger.warn({ err, appId: app.id }, 'webhook dispatch failed'))
    },
    whenIdle: () => queue.onIdle(),
    async close() {
      aborter.abort()
      await queue.onIdle()
    },
  }
}
