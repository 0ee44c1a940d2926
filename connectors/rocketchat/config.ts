/**
 * Settings of the Rocket.Chat connector (`source.connector: rocketchat`): a `mongodump` directory.
 */
import { z } from 'zod'

import { pageSize } from '../sql/source-config.ts'
import { RocketChatFilesSchema } from './files/settings.ts'

/** Rocket.Chat's default `Site_Url` (ROOT_URL): where uploads are served when nothing else is said. */
export const DEFAULT_UPLOADS_BASE_URL = 'http://localhost:3000'

export const RocketChatConfigSchema = z
  .object({
    connector: z.literal('rocketchat'),
    /**
     * The database's directory of a `mongodump` (`dump/<db>/`, holding `users.bson`,
     * `rocketchat_room.bson`, `rocketchat_subscription.bson` and `rocketchat_message.bson`);
     * relative paths are from the working directory.
     */
    path: z.string().trim().min(1, 'must not be empty'),
    /** Documents per page. @default 1000 */
    pageSize,
    /**
     * Base URL under which Rocket.Chat serves uploads: an attachment's URL is
     * `<uploadsBaseUrl>/file-upload/<fileId>/<name>`. @default `siteUrl`, else http://localhost:3000
     */
    uploadsBaseUrl: z.url().optional(),
    /** The Rocket.Chat site URL (`Site_Url`); when set, users get `avatar: <siteUrl>/avatar/<username>`. */
    siteUrl: z.url().optional(),
    /**
     * The uploads' bytes, for the files lane (`files.mode: rehost`): set (`{}` is enough for the
     * GridFS store, whose chunks are in the dump), every attachment carries the locator
     * `{reader: rocketchat, ref: <upload _id>}`; the FileSystem and AmazonS3 stores need their
     * directory or bucket (files/settings.ts). Absent: attachments are read over HTTP from their URL.
     */
    files: RocketChatFilesSchema.optional(),
  })
  .strict()
export type RocketChatConfig = z.output<typeof RocketChatConfigSchema>
export type RocketChatConfigInput = z.input<typeof RocketChatConfigSchema>
