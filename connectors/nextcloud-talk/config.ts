/**
 * Settings of the Nextcloud Talk connector (`source.connector: nextcloud-talk`).
 */
import { z } from 'zod'

import { FileSourceSchema } from '../files/settings.ts'
import { connectTimeoutMs, pageSize, sourceUrl } from '../sql/source-config.ts'

/** Nextcloud's default table prefix (`dbtableprefix` in config.php). */
export const DEFAULT_TABLE_PREFIX = 'oc_'

export const NextcloudTalkConfigSchema = z
  .object({
    connector: z.literal('nextcloud-talk'),
    /** The Nextcloud database: `mysql://…`/`mariadb://…` or `postgres://…`. */
    url: sourceUrl.refine((u) => !/^sqlite:/i.test(u), { message: 'the Nextcloud Talk connector reads MariaDB/MySQL or Postgres, not SQLite' }),
    /** `dbtableprefix` of the Nextcloud install (config/config.php). @default oc_ */
    tablePrefix: z
      .string()
      .regex(/^[A-Za-z0-9_]*$/, 'letters, digits and _ only (as Nextcloud allows)')
      .max(32)
      .default(DEFAULT_TABLE_PREFIX),
    /** Rows per page. @default 1000 */
    pageSize,
    /** Milliseconds to wait for the database. @default 10000 */
    connectTimeoutMs,
    /**
     * The Nextcloud address (e.g. `https://cloud.example.com`); when set, users get
     * `avatar: <siteUrl>/avatar/<uid>/512` and shared files `<siteUrl>/f/<fileid>`.
     */
    siteUrl: z.url().optional(),
    /**
     * Which special conversations are read. `changelog` (type 4, the per-user "Talk updates"
     * conversation) and `noteToSelf` (type 6) are skipped by default: `noteToSelf: self` reads each
     * note as a one-to-one message from the user to themself; `changelog: group` reads it as a group.
     */
    rooms: z
      .object({
        changelog: z.enum(['skip', 'group']).default('skip'),
        noteToSelf: z.enum(['skip', 'self']).default('skip'),
      })
      .strict()
      .prefault({}),
    /**
     * Where the shared files' bytes are, for the files lane (`files.mode: rehost`): the server's
     * `datadirectory` (`kind: local`: `<datadirectory>/<uid>/files/…`), or its primary object
     * store's bucket (`kind: s3`: objects `urn:oid:<fileid>`). Needs `siteUrl` (a shared file is an
     * attachment only with it). Absent: attachments are read over HTTP from `<siteUrl>/f/<fileid>`.
     */
    files: FileSourceSchema.optional(),
  })
  .strict()
  .superRefine((config, ctx) => {
    if (config.files !== undefined && config.siteUrl === undefined) {
      ctx.addIssue({ code: 'custom', path: ['files'], message: 'needs source.siteUrl: a shared file becomes an attachment only with it' })
    }
  })
export type NextcloudTalkConfig = z.output<typeof NextcloudTalkConfigSchema>
export type NextcloudTalkConfigInput = z.input<typeof NextcloudTalkConfigSchema>
