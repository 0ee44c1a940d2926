/**
 * Where a connector's files are (its `source.files` setting): a local directory (the server's
 * data directory, copied or mounted where chatferry runs) or an S3-compatible bucket (the server's
 * own file store). Shared by every connector whose legacy server keeps files in one of those two
 * ways (Mattermost, Zulip, Rocket.Chat's FileSystem/AmazonS3 stores, Nextcloud). Credentials are
 * secrets: write them as `${VAR}`; they are used to make the S3 client and never appear in a
 * locator, an error or a log.
 */
import { z } from 'zod'

export const LocalFilesSchema = z
  .object({
    kind: z.literal('local'),
    /** The directory the server's file paths are relative to. */
    directory: z.string().min(1),
  })
  .strict()

export const S3FilesSchema = z
  .object({
    kind: z.literal('s3'),
    bucket: z.string().min(1),
    /** @default us-east-1 */
    region: z.string().min(1).default('us-east-1'),
    /** An S3-compatible endpoint URL (MinIO, Ceph…; `http://` when the server has no TLS); absent: AWS S3. */
    endpoint: z.string().url('must be a URL').optional(),
    /** Path-style addressing (`endpoint/bucket/key`), which MinIO and most self-hosted servers need. @default false */
    forcePathStyle: z.boolean().default(false),
    /** Key prefix the server put before each path inside the bucket. @default '' */
    prefix: z.string().default(''),
    accessKeyId: z.string().min(1).optional(),
    secretAccessKey: z.string().min(1).optional(),
  })
  .strict()
  .refine((s) => (s.accessKeyId === undefined) === (s.secretAccessKey === undefined), {
    message: 'accessKeyId and secretAccessKey go together (or neither: the AWS default credential chain)',
    path: ['secretAccessKey'],
  })

export const FileSourceSchema = z.discriminatedUnion('kind', [LocalFilesSchema, S3FilesSchema])
export type LocalFiles = z.output<typeof LocalFilesSchema>
export type S3Files = z.output<typeof S3FilesSchema>
export type FileSource = z.output<typeof FileSourceSchema>
