/**
 * Settings of the Zulip connector (`source.connector: zulip`).
 */
import { z } from 'zod'

import { FileSourceSchema } from '../files/settings.ts'
import { connectTimeoutMs, pageSize, sourceUrl } from '../sql/source-config.ts'

/** How stream topics reach the platform. */
export const TOPIC_MODES = ['metadata', 'group-per-topic'] as const
export type TopicMode = (typeof TOPIC_MODES)[number]

/** What happens to messages Zulip holds in its archive tables (deleted, or expired by retention). */
export const ARCHIVED_MESSAGE_MODES = ['skip', 'read'] as const
export type ArchivedMessageMode = (typeof ARCHIVED_MESSAGE_MODES)[number]

/** Where a default Zulip install keeps uploaded files (`LOCAL_UPLOADS_DIR` + `files/`). */
export const DEFAULT_FILE_BASE_URL = 'file:///home/zulip/uploads/files'

export const ZulipConfigSchema = z
  .object({
    connector: z.literal('zulip'),
    /** The Zulip database: `postgres://…` (Zulip runs on Postgres only). */
    url: sourceUrl.refine((u) => /^postgres(ql)?:/i.test(u), { message: 'Zulip runs on Postgres: use postgres://…' }),
    /**
     * The organisation to migrate: its `zerver_realm.string_id` (the subdomain; `""` for the root
     * domain's realm). One Zulip database holds several realms.
     */
    realm: z.string().max(40),
    /** Rows per page. @default 1000 */
    pageSize,
    /** Milliseconds to wait for the database. @default 10000 */
    connectTimeoutMs,
    /**
     * `metadata`: one group per stream, each message's topic in `metadata.topic`. `group-per-topic`:
     * one group per (stream, topic), named `<stream> > <topic>`, with the stream's subscribers as
     * members. @default metadata
     */
    topics: z.enum(TOPIC_MODES).default('metadata'),
    /**
     * `skip`: messages in `zerver_archivedmessage` (deleted by a user or expired by a retention
     * policy) are not read. `read`: they are read as deleted messages (`deletedAt` = when they
     * were archived), for the `deletes` policy to decide. @default skip
     */
    archivedMessages: z.enum(ARCHIVED_MESSAGE_MODES).default('skip'),
    /**
     * Base URL under which the upload store's paths (`zerver_attachment.path_id`) are reachable; an
     * attachment's URL is `<fileBaseUrl>/<path_id>`. @default file:///home/zulip/uploads/files
     */
    fileBaseUrl: z.url().default(DEFAULT_FILE_BASE_URL),
    /**
     * Where the server keeps the uploads' bytes, for the files lane (`files.mode: rehost`): its
     * `LOCAL_UPLOADS_DIR` (`kind: local`; message files are under its `files/`), or its
     * `S3_AUTH_UPLOADS_BUCKET` (`kind: s3`; the key is the `path_id`). Set: every attachment carries
     * the locator `{reader: zulip, ref: path_id}`. Absent: attachments are read over HTTP from
     * their `fileBaseUrl` URL.
     */
    files: FileSourceSchema.optional(),
    /** The Zulip server's URL (e.g. `https://chat.example.com`); when set, users get `avatar: <siteUrl>/avatar/<id>`. */
    siteUrl: z.url().optional(),
  })
  .strict()
export type ZulipConfig = z.output<typeof ZulipConfigSchema>
export type ZulipConfigInput = z.input<typeof ZulipConfigSchema>
