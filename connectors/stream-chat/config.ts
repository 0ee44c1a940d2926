/**
 * Settings of the Stream Chat connector (`source.connector: stream-chat`): a channel export file
 * (`path`) or the REST API (`api`: where, which environment variables hold the key and secret,
 * the per-endpoint limits), and the choices the README calls policies (custom channel types,
 * custom fields).
 */
import { z } from 'zod'

export const DEFAULT_STREAM_PAGE_SIZE = 1000
export const MAX_STREAM_PAGE_SIZE = 50_000
/** Largest single entity of the export (one message, one channel header, one line). */
export const DEFAULT_MAX_ELEMENT_BYTES = 64 * 1024 * 1024

/** Stream's built-in channel types and the group type each becomes (README: channel types). */
export const BUILT_IN_CHANNEL_TYPES = { messaging: 'private', team: 'private', commerce: 'private', livestream: 'public', gaming: 'public' } as const

/** Stream's documented default limits (requests per minute, server-side platform) of the endpoints read. */
export const STREAM_DEFAULT_LIMITS = { queryUsers: 1000, queryChannels: 10_000, getChannel: 10_000, getReplies: 1000, queryMembers: 300 } as const

const perMinute = z.number().int().min(1).max(100_000)

export const StreamApiSchema = z
  .object({
    /** The API's base URL. @default https://chat.stream-io-api.com */
    baseUrl: z.url().default('https://chat.stream-io-api.com'),
    /** The environment variable holding the app's API key. @default STREAM_API_KEY */
    keyEnv: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name')
      .default('STREAM_API_KEY'),
    /** The environment variable holding the app's secret (signs the server token). @default STREAM_API_SECRET */
    secretEnv: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name')
      .default('STREAM_API_SECRET'),
    /** Requests per minute per endpoint; defaults: Stream's documented limits. Lower them to leave room for your live app. */
    limits: z
      .object({ queryUsers: perMinute, queryChannels: perMinute, getChannel: perMinute, getReplies: perMinute, queryMembers: perMinute })
      .partial()
      .strict()
      .default({}),
    /** Retries of one request after a 429, a 5xx or a network failure. @default 8 */
    maxRetries: z.number().int().min(0).max(50).default(8),
    /** Messages per channel page (Stream's maximum is 300). @default 300 */
    messagePageSize: z.number().int().min(1).max(300).default(300),
  })
  .strict()
export type StreamApiConfig = z.output<typeof StreamApiSchema>

export const StreamChatConfigSchema = z
  .object({
    connector: z.literal('stream-chat'),
    /**
     * The channel export: the JSON file Stream's export task links to (v1), or its line-separated
     * JSON (v2, `version: "v2"`), plain or gzip-compressed. Relative paths are read from the
     * directory chatferry runs in.
     */
    path: z.string().min(1, 'must not be empty').optional(),
    /** Read over the REST API instead of an export file. */
    api: StreamApiSchema.optional(),
    /** `json` (v1), `jsonl` (v2), or `auto`: `.jsonl`/`.ndjson` (also `.gz`) are v2, others v1. @default auto */
    format: z.enum(['auto', 'json', 'jsonl']).default('auto'),
    /** Rows per page. @default 1000 */
    pageSize: z.number().int().min(1).max(MAX_STREAM_PAGE_SIZE).default(DEFAULT_STREAM_PAGE_SIZE),
    /** Refuse one entity (a message, a line) over this many bytes: a problem, the file reads on. @default 64 MiB */
    maxElementBytes: z.number().int().min(1024).default(DEFAULT_MAX_ELEMENT_BYTES),
    /** The group type of channels of a custom channel type (not messaging/team/commerce/livestream/gaming). @default private */
    customChannelTypes: z.enum(['private', 'public']).default('private'),
    /** Custom fields of users, channels and messages: kept under `metadata.custom`, or dropped. @default metadata */
    customFields: z.enum(['metadata', 'drop']).default('metadata'),
  })
  .strict()
  .refine((c) => (c.path === undefined) !== (c.api === undefined), { message: 'give either path (an export file) or api (the REST API), not both' })
export type StreamChatConfig = z.output<typeof StreamChatConfigSchema>
export type StreamChatConfigInput = z.input<typeof StreamChatConfigSchema>
