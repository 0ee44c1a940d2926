/**
 * Settings of the Slack export connector (`source.connector: slack-export`).
 */
import { z } from 'zod'

/** Rows per page. */
export const DEFAULT_SLACK_PAGE_SIZE = 1000
export const MAX_SLACK_PAGE_SIZE = 50_000

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
  })
  .strict()
export type SlackExportConfig = z.output<typeof SlackExportConfigSchema>
export type SlackExportConfigInput = z.input<typeof SlackExportConfigSchema>
