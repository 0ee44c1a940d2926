/**
 * `source.files` of the Rocket.Chat connector: where the upload stores other than GridFS keep
 * their bytes. GridFS (`GridFS:Uploads`, Rocket.Chat's default) needs nothing: its chunks are in
 * the dump. `files: {}` turns on locators for GridFS uploads only.
 */
import { z } from 'zod'

import { S3FilesSchema } from '../../files/settings.ts'

export const RocketChatFilesSchema = z
  .object({
    /** The FileSystem store's directory (`FileUpload_FileSystemPath`), copied or mounted here. */
    fileSystemPath: z.string().min(1).optional(),
    /** The AmazonS3 store's bucket (`FileUpload_S3_Bucket`, `FileUpload_S3_Region`, `FileUpload_S3_BucketURL` as `endpoint`…). */
    s3: S3FilesSchema.optional(),
  })
  .strict()
export type RocketChatFiles = z.output<typeof RocketChatFilesSchema>
