/**
 * The job's webhook on the platform, for `chatferry webhooks receive` (issue 15): a version-2
 * webhook (the client always sends `X-Webhook-Version: 2`) pointing at the receiver's public URL,
 * subscribed to the message, group and member triggers (`CONFLICT_TRIGGERS`, through the triggers
 * sub-resource), with `retryOnFailure` (the platform retries after 10 s and 30 s, so a receiver
 * restarting loses nothing) and Basic auth with a generated password.
 *
 * The password is 40 random letters and digits (the documented alphabet: alphanumeric, ≤ 100). The
 * ledger keeps only its salted SHA-256 (`chatferry.webhook_receivers`): a restart reuses the
 * registration and checks deliveries against the hash, and the password itself is never stored,
 * logged or printed. A new password is generated only when the ledger has no registration for this
 * webhook (first start, or the webhook was re-created); it is then set on the platform before its
 * hash is recorded, so the two never disagree after a crash for longer than one restart.
 */
import { createHash, randomBytes, randomInt, timingSafeEqual } from 'node:crypto'

import type { Logger } from 'pino'

import type { PlatformEventsLedger, WebhookReceiver } from '../state/index.ts'
import type { ManagementClient } from '../target/client.ts'
import { PlatformError } from '../target/errors.ts'
import { CONFLICT_TRIGGERS } from '../target/webhook-changes.ts'
import { WEBHOOK_LIMITS } from '../target/webhooks.ts'

/** The Basic-auth username of every receiver (letters and digits, as documented). */
export const RECEIVER_USERNAME = 'chatferry'

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'

/** A new password: 40 characters of the documented alphabet (≈ 238 bits). */
export function generatePassword(): string {
  return Array.from({ length: 40 }, () => ALPHANUMERIC[randomInt(ALPHANUMERIC.length)]).join('')
}

/** `sha256:<salt>:<hash>` of a password. A fast hash is enough for a random 238-bit secret. */
export function hashPassword(password: string, salt: string = randomBytes(16).toString('hex')): string {
  return `sha256:${salt}:${createHash('sha256').update(`${salt}:${password}`).digest('hex')}`
}

/** Whether `password` is the one `stored` is the hash of (constant time). */
export function passwordMatches(password: string, stored: string): boolean {
  const [scheme, salt, hash] = stored.split(':')
  if (scheme !== 'sha256' || salt === undefined || hash === undefined) {
    return false
  }
  const given = Buffer.from(hashPassword(password, salt))
  const want = Buffer.from(stored)
  return given.length === want.length && timingSafeEqual(given, want)
}

/** The default webhook id of a job: `chatferry_` and the job id's letters, digits and `_` (≤ 50). */
export function defaultWebhookId(jobId: string): string {
  return `chatferry_${jobId.replace(/[^A-Za-z0-9_]/g, '_')}`.slice(0, WEBHOOK_LIMITS.ID_MAX)
}

export interface RegistrationOptions {
  readonly client: ManagementClient
  readonly ledger: PlatformEventsLedger
  readonly appId: string
  readonly jobId: string
  readonly webhookId: string
  /** The public HTTPS URL the platform posts to (the user's TLS proxy, or this process with --tls-cert). */
  readonly url: string
  readonly logger: Logger
  readonly signal?: AbortSignal
}

/** What the receiver checks deliveries against. */
export interface Registration extends WebhookReceiver {
  /** True when this start created the webhook or set a new password. */
  readonly created: boolean
}

async function existingWebhook(o: RegistrationOptions): Promise<boolean> {
  try {
    await o.client.getWebhook(o.appId, o.webhookId, o.signal)
    return true
  } catch (err) {
    if (err instanceof PlatformError && (err.status === 404 || err.code === 'ERR_WEBHOOK_NOT_FOUND')) {
      return false
    }
    throw err
  }
}

/** Subscribes the webhook to every trigger it lacks. */
async function ensureTriggers(o: RegistrationOptions): Promise<void> {
  const have = new Set((await o.client.listWebhookTriggers(o.appId, o.webhookId, o.signal)).map((t) => t.id))
  const missing = CONFLICT_TRIGGERS.filter((t) => !have.has(t))
  if (missing.length > 0) {
    await o.client.addWebhookTriggers(o.appId, o.webhookId, missing, o.signal)
  }
}

/**
 * Makes sure the job's webhook exists on the platform as the receiver needs it (URL, Basic auth,
 * enabled, retries, triggers) and returns what deliveries are checked against.
 */
export async function registerReceiver(o: RegistrationOptions): Promise<Registration> {
  const stored = await o.ledger.receiver(o.jobId)
  const exists = await existingWebhook(o)
  const settings = { webhookURL: o.url, useBasicAuth: true, username: RECEIVER_USERNAME, enabled: true, retryOnFailure: true }
  let row: WebhookReceiver
  let created = false
  if (exists && stored !== undefined && stored.webhookId === o.webhookId) {
    // A restart: the platform keeps the password it was given; everything else is set again.
    await o.client.updateWebhook(o.appId, o.webhookId, settings, o.signal)
    row = { ...stored, url: o.url }
    o.logger.info({ webhook: o.webhookId, url: o.url }, 'webhook found: reusing its registration and password')
  } else {
    const password = generatePassword()
    if (exists) {
      await o.client.updateWebhook(o.appId, o.webhookId, { ...settings, password }, o.signal)
    } else {
      await o.client.createWebhook(
        o.appId,
        { id: o.webhookId, name: `chatferry ${o.jobId}`.slice(0, WEBHOOK_LIMITS.NAME_MAX), ...settings, password },
        o.signal,
      )
    }
    row = { webhookId: o.webhookId, url: o.url, username: RECEIVER_USERNAME, passwordHash: hashPassword(password) }
    created = true
    o.logger.info({ webhook: o.webhookId, url: o.url }, exists ? 'webhook found without a recorded password: a new one was set' : 'webhook created')
  }
  await ensureTriggers(o)
  await o.ledger.saveReceiver(o.jobId, row)
  return { ...row, created }
}
