/**
 * Webhook delivery. Documented (facts i12 §4, `fundamentals/webhooks-overview.mdx`): a JSON POST
 * of `{trigger, data, appId, region, webhook}` to the webhook's URL, with HTTP Basic auth when
 * `useBasicAuth`; a disabled webhook receives nothing; only the triggers added to a webhook are
 * delivered to it; the receiver must answer within 2 s (`webhookTimeoutMs`), a 2xx answer is a
 * success, a non-2xx answer, a network error or no answer in time is a failure; with
 * `retryOnFailure` a failed delivery is retried after 10 s and then after 30 s
 * (`webhookRetryDelaysMs`), without it never. Assumed: each delay counts from the previous failed
 * attempt; no ordering guarantee. Deliveries run in the background, never block or fail the
 * request that caused them, and are logged in `webhook_deliveries` with each attempt's start.
 */
import PQueue from 'p-queue'
import type { Logger } from 'pino'

import type { WebhookTrigger } from '../target/webhooks.ts'
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
  /** Aborts deliveries in flight (and retries waiting) and waits for them to be logged. */
  close(): Promise<void>
}

const CONCURRENCY = 8

/**
 * A dispatcher doing at most 8 things at a time (store writes, delivery attempts). A retry's wait
 * holds no slot, so a failing receiver with `retryOnFailure` does not hold up other deliveries.
 */
export function createWebhookDispatcher(db: SandboxDb, logger: Logger): WebhookDispatcher {
  const queue = new PQueue({ concurrency: CONCURRENCY })
  const aborter = new AbortController()
  /** Dispatches and deliveries not finished yet (a delivery may be waiting for its retry). */
  const pending = new Set<Promise<void>>()
  const track = (work: Promise<void>, what: string, appId: string) => {
    const p = work.catch((err: unknown) => logger.warn({ err, appId }, what))
    pending.add(p)
    void p.finally(() => pending.delete(p))
  }
  const inQueue = <T>(fn: () => Promise<T>): Promise<T> => queue.add(fn) as Promise<T>

  interface Hook {
    id: string
    webhook_url: string
    use_basic_auth: boolean
    username: string | null
    password: string | null
    retry_on_failure: boolean
  }

  async function deliver(app: AppInfo, hook: Hook, event: WebhookEvent) {
    const payload = { trigger: event.trigger, data: event.data, appId: app.id, region: app.region, webhook: hook.id }
    const row = await inQueue(() =>
      db
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
        .executeTakeFirstOrThrow(),
    )
    const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': 'chatferry-sandbox' }
    if (hook.use_basic_auth) {
      headers.authorization = `Basic ${Buffer.from(`${hook.username ?? ''}:${hook.password ?? ''}`).toString('base64')}`
    }
    const { webhookRetryDelaysMs, webhookTimeoutMs } = app.settings
    const delays = hook.retry_on_failure ? webhookRetryDelaysMs : []
    const attemptsAtMs: number[] = []
    let httpStatus: number | null = null
    let lastError: string | null = null
    let delivered = false
    for (let attempt = 0; attempt <= delays.length && !aborter.signal.aborted; attempt++) {
      if (attempt > 0) {
        const delay = delays[attempt - 1] ?? 0
        const waited = await new Promise<boolean>((resolve) => {
          if (aborter.signal.aborted) {
            return resolve(false)
          }
          const timer = setTimeout(() => {
            aborter.signal.removeEventListener('abort', onAbort)
            resolve(true)
          }, delay)
          const onAbort = () => {
            clearTimeout(timer)
            resolve(false)
          }
          aborter.signal.addEventListener('abort', onAbort, { once: true })
        })
        if (!waited) {
          break
        }
      }
      const outcome = await inQueue(async () => {
        attemptsAtMs.push(Date.now())
        try {
          const res = await fetch(hook.webhook_url, {
            method: 'POST',
            headers,
            body: JSON.stringify(payload),
            signal: AbortSignal.any([aborter.signal, AbortSignal.timeout(webhookTimeoutMs)]),
            redirect: 'manual',
          })
          await res.body?.cancel().catch(() => {})
          return { httpStatus: res.status as number | null, error: res.ok ? null : `HTTP ${res.status}` }
        } catch (err) {
          const error = (err as Error).name === 'TimeoutError' ? `no answer within ${webhookTimeoutMs} ms` : ((err as Error).message ?? String(err))
          return { httpStatus: null, error }
        }
      })
      httpStatus = outcome.httpStatus
      lastError = outcome.error
      if (outcome.error === null) {
        delivered = true
        break
      }
    }
    const attempts = attemptsAtMs.length
    await inQueue(() =>
      db
        .updateTable('webhook_deliveries')
        .set({
          status: delivered ? 'delivered' : 'failed',
          http_status: httpStatus,
          attempts,
          attempts_at_ms: JSON.stringify(attemptsAtMs),
          last_error: lastError,
          finished_at_ms: Date.now(),
        })
        .where('id', '=', row.id)
        .execute(),
    )
  }

  async function whenIdle(): Promise<void> {
    // A finished dispatch may have started deliveries: wait until nothing is left.
    while (pending.size > 0) {
      await Promise.allSettled([...pending])
    }
    await queue.onIdle()
  }

  return {
    dispatch(app, events) {
      if (events.length === 0 || aborter.signal.aborted) {
        return
      }
      track(
        (async () => {
          const { hooks, subscribed } = await inQueue(async () => ({
            hooks: await db
              .selectFrom('webhooks')
              .select(['id', 'webhook_url', 'use_basic_auth', 'username', 'password', 'retry_on_failure'])
              .where('app_id', '=', app.id)
              .where('enabled', '=', true)
              .orderBy('seq')
              .execute(),
            subscribed: await db
              .selectFrom('webhook_triggers')
              .select(['webhook_id', 'trigger_id'])
              .where('app_id', '=', app.id)
              .where('trigger_id', 'in', [...new Set(events.map((e) => e.trigger))])
              .execute(),
          }))
          const wants = new Set(subscribed.map((r) => `${r.webhook_id}\u0000${r.trigger_id}`))
          for (const hook of hooks) {
            for (const event of events) {
              // Documented: a webhook receives the triggers added to it, and nothing else.
              if (!wants.has(`${hook.id}\u0000${event.trigger}`)) {
                continue
              }
              track(deliver(app, hook, event), 'webhook delivery failed', app.id)
            }
          }
        })(),
        'webhook dispatch failed',
        app.id,
      )
    },
    whenIdle,
    async close() {
      aborter.abort()
      await whenIdle()
    },
  }
}
