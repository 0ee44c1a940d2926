/**
 * Settings of the loader (`load:` and `job:` in the configuration file, composed into it by
 * `src/job/config.ts`), with command-line flags and environment variables layered on top.
 */
import { z } from 'zod'

import { ConfigError, type ConfigProblem } from '../errors.ts'
import { zodProblems } from '../zod-problems.ts'

/** Concurrent batches per process. */
export const DEFAULT_CONCURRENCY = 4
/**
 * Chat updates in flight per process. A chat call carries one update and costs a few ledger round
 * trips around it (claim, sent mark, settlement), so at ~300 ms an update, 4 in flight reach only
 * ~13 calls a second: below the default chat quota (1,000/min ≈ 17/s). 16 keeps the quota the limit.
 */
export const DEFAULT_UPDATE_CONCURRENCY = 16
/** Seconds a worker may hold a batch before another worker takes it over. */
export const DEFAULT_LEASE_SECONDS = 120

/** The `load:` section. */
export const LoadConfigSchema = z
  .object({
    /** Batches in flight per process (1–256). The quota is shared anyway; more helps only against latency. @default 4 */
    concurrency: z.number().int().min(1).max(256).default(DEFAULT_CONCURRENCY),
    /** Chat updates (the update lane of a delta) in flight per process (1–256); the chat quota is shared anyway. @default 16 */
    updateConcurrency: z.number().int().min(1).max(256).default(DEFAULT_UPDATE_CONCURRENCY),
    /** Lease of one batch in seconds: a dead worker's batches are taken over after this long. Must exceed `target.timeoutMs` plus a few seconds. @default 120 */
    leaseSeconds: z.number().int().min(5).max(86_400).default(DEFAULT_LEASE_SECONDS),
    /** The platform's rate-limit window in ms; `target.quota.requestsPerMinute` is spread over it. @default 60000 */
    quotaWindowMs: z.number().int().min(100).max(3_600_000).default(60_000),
    /**
     * Margin added to the window before the quota is divided into slots (quota-budget.ts), to absorb
     * the jitter between a request's slot and its arrival at the platform (a loaded host, a proxy).
     * Must be less than the window. @default max(1% of the window, 250)
     */
    quotaGuardMs: z.number().int().min(0).max(600_000).optional(),
    /** Attempts of one request (5xx, timeouts, dropped connections) before the batch is split or handed back. @default 4 */
    maxAttempts: z.number().int().min(1).max(50).default(4),
    /** Batches packed ahead of the senders (all processes together). @default 8 × concurrency, at least 32 */
    queueDepth: z.number().int().min(1).max(100_000).optional(),
    /** Stop (exit 1) when no batch has succeeded for this long while requests keep failing. @default 600000 */
    giveUpAfterMs: z.number().int().min(1000).default(600_000),
    /** Longest pause honoured from one Retry-After / X-RateLimit-Reset. @default 120000 */
    maxRetryAfterMs: z.number().int().min(0).default(120_000),
    /**
     * Whether `target.quota.requestsPerMinute` is one budget for the four import endpoints together
     * (`app`), or one budget per endpoint (`endpoint`). The documentation can be read both ways
     * ("rate limits on each API endpoint" / "60 requests per minute … for these data import
     * endpoints"); `app` is the cautious reading. @default 'app'
     */
    quotaScope: z.enum(['app', 'endpoint']).default('app'),
    /**
     * Messages that would age out of the retention window within this many ms of being packed are
     * settled by the retention policy at pack time rather than sent: a batch packed now may go out a
     * little later, and one row the platform refuses as too old fails its whole request. @default 600000
     */
    retentionMarginMs: z.number().int().min(0).max(86_400_000).default(600_000),
  })
  .strict()
  .superRefine((load, ctx) => {
    if (load.quotaGuardMs !== undefined && load.quotaGuardMs >= load.quotaWindowMs) {
      ctx.addIssue({
        code: 'custom',
        path: ['quotaGuardMs'],
        message: `must be less than load.quotaWindowMs (${load.quotaWindowMs})`,
      })
    }
  })
export type LoadConfig = z.output<typeof LoadConfigSchema>

/** The `job:` section. */
export const JobConfigSchema = z
  .object({
    /** The ledger job id. @default the target app id, lowercased */
    id: z
      .string()
      .regex(/^[a-z0-9_-]{1,64}$/, 'must be 1–64 characters of a-z, 0-9, - and _')
      .optional(),
  })
  .strict()
export type JobConfig = z.output<typeof JobConfigSchema>

const ENV_KEYS: Record<string, keyof LoadConfig> = {
  CHATFERRY_LOAD_CONCURRENCY: 'concurrency',
  CHATFERRY_LOAD_UPDATE_CONCURRENCY: 'updateConcurrency',
  CHATFERRY_LOAD_LEASE_SECONDS: 'leaseSeconds',
  CHATFERRY_LOAD_QUOTA_WINDOW_MS: 'quotaWindowMs',
  CHATFERRY_LOAD_QUOTA_GUARD_MS: 'quotaGuardMs',
  CHATFERRY_LOAD_MAX_ATTEMPTS: 'maxAttempts',
  CHATFERRY_LOAD_QUEUE_DEPTH: 'queueDepth',
  CHATFERRY_LOAD_GIVE_UP_AFTER_MS: 'giveUpAfterMs',
}

/**
 * Resolves the loader settings: the config file's `load:` section (when the main config carries
 * one), then `CHATFERRY_LOAD_*` environment variables, then flags. Throws {@link ConfigError}.
 */
export function resolveLoadConfig(
  fromFile: unknown,
  flags: Partial<Record<keyof LoadConfig, number>> = {},
  env: NodeJS.ProcessEnv = process.env,
  file = '<load settings>',
): LoadConfig {
  const merged: Record<string, unknown> = { ...(fromFile !== null && typeof fromFile === 'object' ? fromFile : {}) }
  for (const [name, key] of Object.entries(ENV_KEYS)) {
    const raw = env[name]
    if (raw !== undefined && raw !== '') {
      merged[key] = Number(raw)
    }
  }
  for (const [key, value] of Object.entries(flags)) {
    if (value !== undefined) {
      merged[key] = value
    }
  }
  const parsed = LoadConfigSchema.safeParse(merged)
  if (!parsed.success) {
    throw new ConfigError(file, zodProblems(parsed.error, ['load']))
  }
  return parsed.data
}

/** The quota budgets' window and guard options from the settings (the guard only when configured). */
export function quotaTiming(load: Pick<LoadConfig, 'quotaWindowMs' | 'quotaGuardMs'>): { windowMs: number; guardMs?: number } {
  return load.quotaGuardMs === undefined ? { windowMs: load.quotaWindowMs } : { windowMs: load.quotaWindowMs, guardMs: load.quotaGuardMs }
}

/** The job id: `job.id`, else the app id lowercased. */
export function defaultJobId(appId: string): string {
  return appId
    .toLowerCase()
    .replace(/[^a-z0-9_-]/g, '-')
    .slice(0, 64)
}

/** Seconds a lease must outlast one request's timeout, for the settling that follows it. */
export const LEASE_MARGIN_SECONDS = 3

/**
 * A lease shorter than one request could expire while the request is in flight, and another
 * worker would send the batch again. One check, run by `config check` and by every command.
 */
export function leaseProblems(leaseSeconds: number, timeoutMs: number): ConfigProblem[] {
  if (leaseSeconds * 1000 >= timeoutMs + LEASE_MARGIN_SECONDS * 1000) {
    return []
  }
  return [
    {
      path: 'load.leaseSeconds',
      message: `${leaseSeconds} s must exceed target.timeoutMs (${timeoutMs} ms) by at least ${LEASE_MARGIN_SECONDS} s`,
    },
  ]
}
