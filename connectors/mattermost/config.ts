/**
 * Settings of the Mattermost connector (`source.connector: mattermost`).
 */
import { z } from 'zod'

import { FileSourceSchema } from '../files/settings.ts'
import { connectTimeoutMs, pageSize, sourceUrl } from '../sql/source-config.ts'

/** The placeholders a group name rule may use. */
export const GROUP_NAME_PLACEHOLDERS = ['team', 'teamDisplayName', 'channel', 'channelName'] as const

/** @default `{channel}` */
export const DEFAULT_GROUP_NAME = '{channel}'
/** Where a default Mattermost install keeps its files (`FileSettings.Directory`). */
export const DEFAULT_FILE_BASE_URL = 'file:///opt/mattermost/data'

/** A Mattermost team's name (as in its URL): 2–64 of a-z, 0-9, - and _, a letter or digit at both ends. */
export const MATTERMOST_TEAM_NAME = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_-]{0,62}[a-z0-9]$/, 'must be a Mattermost team name: 2–64 of a-z, 0-9, - and _')

export const MattermostConfigSchema = z
  .object({
    connector: z.literal('mattermost'),
    /**
     * The Mattermost database: `postgres://…` (lowercase schema) or `mysql://…`/`mariadb://…`
     * (CamelCase schema).
     */
    url: sourceUrl.refine((u) => !/^sqlite:/i.test(u), { message: 'Mattermost runs on Postgres or MySQL, not SQLite' }),
    /** Rows per page. @default 1000 */
    pageSize,
    /** Milliseconds to wait for the database. @default 10000 */
    connectTimeoutMs,
    /**
     * How a team channel's group name is built, since the platform has no teams: `{team}` (team
     * name), `{teamDisplayName}`, `{channel}` (channel display name), `{channelName}` (channel
     * name). Group DMs always use their display name. @default `{channel}`
     */
    groupName: z
      .string()
      .min(1)
      .refine((s) => /\{(team|teamDisplayName|channel|channelName)\}/.test(s), {
        message: `must use at least one of ${GROUP_NAME_PLACEHOLDERS.map((p) => `{${p}}`).join(', ')}`,
      })
      .refine((s) => [...s.matchAll(/\{([^}]*)\}/g)].every((m) => (GROUP_NAME_PLACEHOLDERS as readonly string[]).includes(m[1] ?? '')), {
        message: `unknown placeholder; use ${GROUP_NAME_PLACEHOLDERS.map((p) => `{${p}}`).join(', ')}`,
      })
      .default(DEFAULT_GROUP_NAME),
    /**
     * Base URL under which the file store's paths (`fileinfo.path`) are reachable; an attachment's
     * URL is `<fileBaseUrl>/<path>`. @default file:///opt/mattermost/data
     */
    fileBaseUrl: z.url().default(DEFAULT_FILE_BASE_URL),
    /**
     * Where the server keeps the files' bytes, for the files lane (`files.mode: rehost`): its data
     * directory (`FileSettings.Directory`, `kind: local`) or its bucket (`FileSettings.AmazonS3Bucket`
     * with `AmazonS3PathPrefix` as `prefix`, `kind: s3`). Set: every attachment carries a locator
     * (`FileInfo.Path`) this connector's reader opens. Absent: attachments are read over HTTP from
     * their `fileBaseUrl` URL.
     */
    files: FileSourceSchema.optional(),
    /**
     * The Mattermost site URL (e.g. `https://chat.example.com`); when set, users get
     * `avatar: <siteUrl>/api/v4/users/<id>/image`.
     */
    siteUrl: z.url().optional(),
    /**
     * Read one team only (a fleet's tenant per team): its members, its channels, the group DMs and
     * direct messages among its members, and the posts of those. Absent: the whole database.
     */
    team: MATTERMOST_TEAM_NAME.optional(),
  })
  .strict()
export type MattermostConfig = z.output<typeof MattermostConfigSchema>
export type MattermostConfigInput = z.input<typeof MattermostConfigSchema>
