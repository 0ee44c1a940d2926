/**
 * Settings of the Slack export connector (`source.connector: slack-export`).
 */
import { z } from 'zod'

/** Rows per page. */
export const DEFAULT_SLACK_PAGE_SIZE = 1000
export const MAX_SLACK_PAGE_SIZE = 50_000

const MiB = 1024 * 1024
const GiB = 1024 * MiB

/** Largest inflated size of one file of the export (a day file, `users.json`, …). */
export const DEFAULT_MAX_ENTRY_BYTES = 4 * GiB
/** Largest inflated size of the whole export: the sum of its files. */
export const DEFAULT_MAX_ARCHIVE_BYTES = 64 * GiB
/** Largest single element of a JSON array file (one message, one user, one channel). */
export const DEFAULT_MAX_ELEMENT_BYTES = 64 * MiB

/** The placeholders an attachment URL template may use. */
export const FILE_URL_PLACEHOLDERS = ['id', 'name', 'conversation'] as const

export const SlackExportConfigSchema = z
  .object({
    connector: z.literal('slack-export'),
    /**
     * The export: the ZIP file Slack gives you (`… Slack export … .zip`) or the folder it unpacks
     * to. Relative paths are read from the directory chatferry runs in.
     */
    path: z.string().min(1, 'must not be empty'),
    /** Rows per page. @default 1000 */
    pageSize: z.number().int().min(1).max(MAX_SLACK_PAGE_SIZE).default(DEFAULT_SLACK_PAGE_SIZE),
    /**
     * Where the files the messages share are reachable, when you copied them out of Slack: a URL
     * template with `{id}` (Slack's file id, `F…`), `{name}` (the file name, URL-encoded) and
     * `{conversation}` (the channel/DM id). Absent: Slack's own `url_private`, with the export's
     * access token (`?t=xoxe-…`) removed — opening it needs a Slack login to that workspace.
     */
    fileUrl: z
      .url()
      .refine((s) => /\{(id|name)\}/.test(s), { message: 'must use {id} or {name}' })
      .refine((s) => [...s.matchAll(/\{([^}]*)\}/g)].every((m) => (FILE_URL_PLACEHOLDERS as readonly string[]).includes(m[1] ?? '')), {
        message: `unknown placeholder; use ${FILE_URL_PLACEHOLDERS.map((p) => `{${p}}`).join(', ')}`,
      })
      .optional(),
    /**
     * A Slack token with `files:read` (a user or bot token: `xoxp-…`, `xoxb-…`) the files lane
     * sends as `Authorization: Bearer` to read `url_private` of the files the export does not
     * carry (`files.mode: rehost`). A secret: write it as `${SLACK_TOKEN}`. The export's own token
     * is always removed from the URLs and never used. Absent: only files inside the export get a
     * locator; the others are read from their URL as it is (Slack answers with its login page,
     * which the files lane refuses as HTML).
     */
    fileToken: z.string().min(1).optional(),
    /**
     * Refuse a file of the export that inflates to more than this many bytes (checked against the
     * ZIP's declared size and again while inflating): the file is a problem, the rest is read.
     * @default 4 GiB
     */
    maxEntryBytes: z.number().int().min(1024).default(DEFAULT_MAX_ENTRY_BYTES),
    /** Refuse an export whose files add up to more than this many bytes, inflated (exit 2). @default 64 GiB */
    maxArchiveBytes: z.number().int().min(1024).default(DEFAULT_MAX_ARCHIVE_BYTES),
    /** Refuse one array element (a message, a user) over this many bytes: a problem, the file reads on. @default 64 MiB */
    maxElementBytes: z.number().int().min(1024).default(DEFAULT_MAX_ELEMENT_BYTES),
  })
  .strict()
export type SlackExportConfig = z.output<typeof SlackExportConfigSchema>
export type SlackExportConfigInput = z.input<typeof SlackExportConfigSchema>
