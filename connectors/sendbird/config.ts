/**
 * Settings of the Sendbird connector (`source.connector: sendbird`): either the files of
 * Sendbird's Data Export (`export:`) or its Platform API v3 (`api:`), never both.
 */
import { z } from 'zod'

/** Rows per page. */
export const DEFAULT_SENDBIRD_PAGE_SIZE = 1000
export const MAX_SENDBIRD_PAGE_SIZE = 50_000

const MiB = 1024 * 1024
const GiB = 1024 * MiB

/** One data type's export: a path, or several (message exports cover at most 31 days each). */
const Paths = z
  .union([z.string().min(1, 'must not be empty'), z.array(z.string().min(1, 'must not be empty')).min(1)])
  .transform((p) => (typeof p === 'string' ? [p] : p))

export const SendbirdExportSchema = z
  .object({
    /** The users export: the ZIP Sendbird's `file.url` gives, or the folder it unpacks to. */
    users: Paths,
    /** The channels export (group and open channels, with their members and operators). */
    channels: Paths,
    /** The messages exports, oldest first (each covers at most 31 days). */
    messages: Paths,
    /** The `csv_delimiter` the CSV exports were requested with. @default , */
    csvDelimiter: z.string().length(1, 'must be one character').default(','),
    /** A file of an export that inflates to more is a problem, not read. @default 4 GiB */
    maxEntryBytes: z
      .number()
      .int()
      .min(1024)
      .default(4 * GiB),
    /** An export whose files add up to more is refused (exit 2). @default 64 GiB */
    maxArchiveBytes: z
      .number()
      .int()
      .min(1024)
      .default(64 * GiB),
    /** One record (a JSON array element, a CSV row) over this many bytes is a problem. @default 64 MiB */
    maxElementBytes: z
      .number()
      .int()
      .min(1024)
      .default(64 * MiB),
  })
  .strict()

export const SendbirdApiSchema = z
  .object({
    /** The application id (`api-{appId}.sendbird.com`). */
    appId: z.string().regex(/^[A-Za-z0-9-]+$/, 'must be the application id from the dashboard (letters, digits, dashes)'),
    /** The master or secondary API token: `${SENDBIRD_API_TOKEN}`. Never logged. */
    apiToken: z.string().min(1, 'must not be empty (set it from the environment: apiToken: ${SENDBIRD_API_TOKEN})'),
    /** Another base URL (a proxy, the tests' emulator): `https://…`, or `http://` to loopback only. */
    baseUrl: z.url().optional(),
    /**
     * GET requests per second: your plan's documented limit (10 on a free trial; 60 at 5K MAU, 100,
     * 200, 400, 600 at 100K+). chatferry stays at it, never above. @default 10
     */
    requestsPerSecond: z.number().positive().max(600).default(10),
    /** Attempts of one request answered 429 or 5xx (or not answered) before the read fails. @default 8 */
    retries: z.number().int().min(0).max(30).default(8),
    /** Milliseconds one request may take. @default 30000 */
    timeoutMs: z.number().int().min(100).default(30_000),
  })
  .strict()

export const SendbirdConfigSchema = z
  .object({
    connector: z.literal('sendbird'),
    export: SendbirdExportSchema.optional(),
    api: SendbirdApiSchema.optional(),
    /** Rows per page. @default 1000 */
    pageSize: z.number().int().min(1).max(MAX_SENDBIRD_PAGE_SIZE).default(DEFAULT_SENDBIRD_PAGE_SIZE),
  })
  .strict()
  .refine((c) => (c.export === undefined) !== (c.api === undefined), {
    message: 'set exactly one of source.export (Data Export files) and source.api (Platform API)',
  })
  .refine(
    (c) =>
      c.api?.baseUrl === undefined || c.api.baseUrl.startsWith('https://') || /^http:\/\/(127\.0\.0\.1|localhost|\[::1\])[:/]/.test(c.api.baseUrl),
    {
      message: 'api.baseUrl must be https://, or http:// to loopback',
      path: ['api', 'baseUrl'],
    },
  )
export type SendbirdConfig = z.output<typeof SendbirdConfigSchema>
export type SendbirdConfigInput = z.input<typeof SendbirdConfigSchema>
export type SendbirdExportConfig = z.output<typeof SendbirdExportSchema>
export type SendbirdApiConfig = z.output<typeof SendbirdApiSchema>
