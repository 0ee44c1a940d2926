/**
 * The `notify:` section of a job's configuration: where to tell people that something happened
 * (a run failed or finished, rejects piled up, the final delta is done, a verify result), and of
 * a fleet file (`fleet run`: a tenant that ended needing a fix, src/fleet/fleet-notify.ts). Each hook is a URL, a format (`json`: chatferry's own event object;
 * `slack`: the incoming-webhook `{"text": …}` most team chats accept), the events it wants and
 * optional headers. A hook's URL and headers are secrets (a Slack webhook URL is its own key):
 * they are never logged or printed; use `${VAR}` for them.
 */
import { z } from 'zod'

import type { DeepReadonly } from '../../lib.ts'

export const NOTIFY_EVENTS = [
  'run.failed',
  'run.finished',
  'rejects.threshold',
  'delta.final.done',
  'verify.result',
  'fleet.tenant.needs-fix',
] as const
export type NotifyEvent = (typeof NOTIFY_EVENTS)[number]

const HookSchema = z
  .object({
    url: z
      .string()
      .url('must be a URL')
      .regex(/^https?:\/\//i, 'must be an http:// or https:// URL'),
    /** `json`: chatferry's event object; `slack`: `{"text": "…"}` (Slack, Mattermost, Rocket.Chat, Teams workflows, Discord's /slack). */
    format: z.enum(['json', 'slack']).default('json'),
    /** The events this hook gets. @default every event */
    events: z.array(z.enum(NOTIFY_EVENTS)).min(1).optional(),
    /** Extra request headers (an Authorization header, say): secrets, never logged. */
    headers: z.record(z.string().regex(/^[A-Za-z0-9-]+$/, 'must be a header name'), z.string()).optional(),
  })
  .strict()

export const NotifySchema = z
  .object({
    hooks: z.array(HookSchema).min(1),
    /** `rejects.threshold` fires when a run ends with at least this many newly rejected items. @default 1 */
    rejectThreshold: z.number().int().positive().default(1),
    /** One delivery attempt's limit. @default 5000 */
    timeoutMs: z.number().int().positive().max(60_000).default(5000),
    /** Attempts after the first, with backoff. @default 3 */
    retries: z.number().int().min(0).max(10).default(3),
    /** How long a command that is ending waits for deliveries still under way; then it exits anyway. @default 5000 */
    exitGraceMs: z.number().int().min(0).max(60_000).default(5000),
  })
  .strict()

export type NotifyConfig = DeepReadonly<z.output<typeof NotifySchema>>
