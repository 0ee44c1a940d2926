/**
 * The `files:` section of a job's configuration: what happens to the files (attachments) of the
 * history. `rehost` copies every file into the customer's store before its message is sent;
 * `reference` sends the legacy URL as it is (today's behaviour: it breaks when the legacy system
 * is switched off); `omit` sends no attachment. Store credentials are secrets: use `${VAR}`.
 */
import { z } from 'zod'

import type { DeepReadonly } from '../lib.ts'

const PublicBaseUrl = z
  .string()
  .url('must be a URL')
  .regex(/^https?:\/\//i, 'must be an http:// or https:// URL')
  .describe('the permanent public URL the store is served at (bucket website, CDN); never presigned')

const S3StoreSchema = z
  .object({
    kind: z.literal('s3'),
    bucket: z.string().min(1),
    /** @default us-east-1 */
    region: z.string().min(1).default('us-east-1'),
    /** An S3-compatible endpoint (R2, MinIO, GCS interop …); absent: AWS S3. */
    endpoint: z.string().url('must be a URL').optional(),
    /** Path-style addressing (`endpoint/bucket/key`), which MinIO and most self-hosted servers need. @default false */
    forcePathStyle: z.boolean().default(false),
    /** Key prefix inside the bucket. @default '' */
    prefix: z.string().default(''),
    accessKeyId: z.string().min(1).optional(),
    secretAccessKey: z.string().min(1).optional(),
    publicBaseUrl: PublicBaseUrl,
    /** Parts above this size go up in multipart uploads. @default 16 MiB */
    multipartThresholdBytes: z
      .number()
      .int()
      .min(5 * 1024 * 1024)
      .default(16 * 1024 * 1024),
  })
  .strict()

const LocalStoreSchema = z
  .object({
    kind: z.literal('local'),
    /** Directory the copies are written under (created when missing). */
    directory: z.string().min(1),
    /** Where the operator serves that directory; absent in the demo, which serves it itself. */
    publicBaseUrl: PublicBaseUrl.optional(),
  })
  .strict()

export const FileStoreConfigSchema = z.discriminatedUnion('kind', [S3StoreSchema, LocalStoreSchema])

export const FILE_MODES = ['rehost', 'reference', 'omit'] as const
export const FILE_FAILURE_POLICIES = ['wait', 'link-original', 'note'] as const

const HostPacingSchema = z
  .object({
    /** Downloads at once from one host. @default 4 */
    concurrency: z.number().int().positive().max(256).default(4),
    /** Requests per second to one host. @default 10 */
    requestsPerSecond: z.number().positive().max(10_000).default(10),
  })
  .strict()

export const FilesSchema = z
  .object({
    /** @default reference */
    mode: z.enum(FILE_MODES).default('reference'),
    /** What a message whose file failed does: wait (hold it, keep retrying), link-original, note. @default wait */
    onFailure: z.enum(FILE_FAILURE_POLICIES).default('wait'),
    /** Needed for `rehost`. */
    store: FileStoreConfigSchema.optional(),
    /** Largest file copied; larger ones fail as `too-large`. @default 100 MiB (the platform's upload limit) */
    maxBytes: z
      .number()
      .int()
      .positive()
      .default(100 * 1024 * 1024),
    /** Pacing per source host; `hosts` overrides it for one host. */
    perHost: HostPacingSchema.prefault({}),
    hosts: z.record(z.string().min(1), HostPacingSchema).default({}),
    /** A download that receives nothing for this long is aborted and retried (from where it stopped). @default 60 */
    stallTimeoutSeconds: z.number().int().positive().max(3600).default(60),
    /** Attempts of one file in one run before it is `failed` (a later run tries again under `wait`). @default 5 */
    attempts: z.number().int().positive().max(100).default(5),
    /** Bytes per second across all downloads; absent: no cap. */
    bandwidthBytesPerSecond: z.number().int().positive().optional(),
    /**
     * When a message is sent, replace every legacy URL of a file copied in this job that its text
     * names by the store's public URL (docs/files.md, "Links in message text"). @default false
     */
    rewriteTextLinks: z.boolean().default(false),
    /** Where downloads are spooled before they are checked and stored. @default <state.dir>/files-spool */
    spoolDir: z.string().min(1).optional(),
  })
  .strict()
  .superRefine((files, ctx) => {
    if (files.mode === 'rehost' && files.store === undefined) {
      ctx.addIssue({ code: 'custom', path: ['store'], message: 'files.mode rehost needs a store (kind: s3 or local)' })
    }
  })

export type FilesConfig = DeepReadonly<z.output<typeof FilesSchema>>
export type FileStoreConfig = DeepReadonly<z.output<typeof FileStoreConfigSchema>>
