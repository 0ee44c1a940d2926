/**
 * Delivers notifications in the background: `send` queues the event to every hook that wants it
 * and returns at once (the run never waits on a chat server); each delivery is one POST with a
 * timeout, retried with backoff (p-retry) on a network error, a timeout, a 429 or a 5xx. `flush`
 * lets a command that is ending give the deliveries under way at most `exitGraceMs`. Nothing here
 * throws into the caller: a hook that fails is logged by its number and host (its URL is a secret),
 * and every text sent has the job's secrets replaced by `[redacted]`.
 */
import pRetry, { AbortError } from 'p-retry'
import type { Logger } from 'pino'

import type { NotifyConfig, NotifyEvent } from './config.ts'

export interface Notification {
  readonly event: NotifyEvent
  readonly jobId: string
  /** One line for people (the Slack format's text, the JSON's `summary`). */
  readonly summary: string
  /** Facts for machines (counts, run id, status), in the JSON format. */
  readonly details?: Record<string, unknown>
}

export interface Notifier {
  send(n: Notification): void
  /** Waits for the deliveries under way, at most the configured grace; never throws. */
  flush(): Promise<void>
}

const NONE: Notifier = { send: () => {}, flush: async () => {} }

export function createNotifier(
  config: NotifyConfig | undefined,
  logger: Pick<Logger, 'warn' | 'debug'>,
  secrets: readonly (string | undefined)[] = [],
): Notifier {
  if (config === undefined) {
    return NONE
  }
  const hidden = [...new Set(secrets.filter((s): s is string => typeof s === 'string' && s.length >= 4))]
  const redact = (text: string) => hidden.reduce((t, s) => t.split(s).join('[redacted]'), text).replace(/\/\/([^:/@\s]+):[^@\s]*@/g, '//$1:***@')
  const pending = new Set<Promise<void>>()
  // Cut at the end of the grace: a request left open would keep the process from exiting.
  const giveUp = new AbortController()
  return {
    send(n) {
      const at = new Date().toISOString()
      config.hooks.forEach((hook, i) => {
        if (hook.events !== undefined && !hook.events.includes(n.event)) {
          return
        }
        const body =
          hook.format === 'slack'
            ? { text: redact(`chatferry ${n.event} — job ${n.jobId}: ${n.summary}`) }
            : JSON.parse(redact(JSON.stringify({ source: 'chatferry', event: n.event, at, jobId: n.jobId, summary: n.summary, ...n.details })))
        const label = `notify hook #${i + 1} (${new URL(hook.url).host})`
        const delivery = deliver(hook.url, hook.headers ?? {}, body, config, giveUp.signal)
          .then(() => logger.debug({ event: n.event }, `${label}: delivered`))
          .catch((err: unknown) =>
            logger.warn({ event: n.event }, `${label}: not delivered (${redact(err instanceof Error ? err.message : String(err))})`),
          )
          .finally(() => pending.delete(delivery))
        pending.add(delivery)
      })
    },
    async flush() {
      if (pending.size === 0) {
        return
      }
      let timer: NodeJS.Timeout | undefined
      await Promise.race([
        Promise.allSettled([...pending]),
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, config.exitGraceMs)
          timer.unref()
        }),
      ])
      clearTimeout(timer)
      if (pending.size > 0) {
        logger.warn(`${pending.size} notification(s) still under way after ${config.exitGraceMs} ms: given up`)
        giveUp.abort()
      }
    },
  }
}

async function deliver(url: string, headers: Readonly<Record<string, string>>, body: unknown, config: NotifyConfig, cut: AbortSignal): Promise<void> {
  await pRetry(
    async () => {
      let res: Response
      try {
        res = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'user-agent': 'chatferry', ...headers },
          body: JSON.stringify(body),
          signal: AbortSignal.any([AbortSignal.timeout(config.timeoutMs), cut]),
        })
      } catch (err) {
        // Never the URL in the message (undici's does not carry it; the cause may): the name only.
        throw new Error(err instanceof Error && err.name === 'TimeoutError' ? `no answer within ${config.timeoutMs} ms` : 'connection failed', {
          cause: err,
        })
      }
      await res.body?.cancel()
      if (res.status === 429 || res.status >= 500) {
        throw new Error(`answered ${res.status}`)
      }
      if (res.status >= 300) {
        throw new AbortError(`answered ${res.status}`)
      }
    },
    { retries: config.retries, minTimeout: 500, maxTimeout: 5000, randomize: true, signal: cut },
  )
}
