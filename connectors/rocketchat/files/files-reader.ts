/**
 * The Rocket.Chat connector's files reader (`files()`): a ref is an upload's `_id`; its record in
 * the dump's `rocketchat_uploads` says which store holds the bytes —
 *
 * - `GridFS:Uploads`: the chunks in the dump itself (`rocketchat_uploads.files`/`.chunks`, gridfs.ts);
 * - `FileSystem:Uploads`: `<fileSystemPath>/<_id>[.<extension>]` (Rocket.Chat's LocalStore);
 * - `AmazonS3:Uploads`: the key `AmazonS3.path` in the configured bucket.
 *
 * Any other store (Google Cloud Storage, WebDAV) is refused for that file with its name. The
 * indexes are built on the first file and kept until `close()`.
 */
import { join } from 'node:path'
import { Readable } from 'node:stream'

import { ChatferryError } from '../../../src/errors.ts'
import { type FileReader, FileSourceError, type OpenedFile, type OpenOptions } from '../../../src/model/files.ts'
import { requireDirectory } from '../../files/check-directory.ts'
import { localDirectoryReader } from '../../files/local-reader.ts'
import { s3ObjectReader } from '../../files/s3-reader.ts'
import { gridFsBytes, type GridFsIndex, readGridFsIndex } from './gridfs.ts'
import type { RocketChatFiles } from './settings.ts'
import { readUploadIndex, type UploadRecord, UPLOADS_COLLECTION } from './upload-index.ts'

/** The stores this reader reads. */
export const READ_STORES = ['GridFS:Uploads', 'FileSystem:Uploads', 'AmazonS3:Uploads'] as const

export function rocketChatFilesReader(dumpDir: string, files: RocketChatFiles): FileReader {
  if (files.fileSystemPath !== undefined) {
    requireDirectory('source.files.fileSystemPath', files.fileSystemPath, "the FileSystem store's directory (FileUpload_FileSystemPath)")
  }
  const local = files.fileSystemPath === undefined ? undefined : localDirectoryReader(files.fileSystemPath)
  const s3 = files.s3 === undefined ? undefined : s3ObjectReader({ ...files.s3 })
  let uploads: Promise<Map<string, UploadRecord>> | undefined
  let grid: Promise<GridFsIndex> | undefined
  const dumpFile = (suffix: string) => join(dumpDir, `${UPLOADS_COLLECTION}${suffix}.bson`)

  const recordOf = async (id: string): Promise<UploadRecord> => {
    uploads ??= readUploadIndex(dumpFile(''))
    const found = (await uploads).get(id)
    if (found === undefined) {
      throw new FileSourceError('missing', `upload ${id}: no record in the dump's ${UPLOADS_COLLECTION}.bson`, false)
    }
    return found
  }

  return {
    async open(ref: string, options: OpenOptions = {}): Promise<OpenedFile> {
      options.signal?.throwIfAborted()
      const upload = await recordOf(ref)
      const offset = options.offset ?? 0
      switch (upload.store) {
        case 'GridFS:Uploads': {
          grid ??= readGridFsIndex(dumpFile('.files'), dumpFile('.chunks')).catch((err: unknown) => {
            grid = undefined
            throw new ChatferryError('SOURCE_UNAVAILABLE', `the dump's GridFS files cannot be read: ${(err as Error).message}`, { cause: err })
          })
          const f = gridFsBytes(await grid, ref, offset)
          return { body: Readable.from(f.bytes, { objectMode: false }), size: f.size, start: f.start }
        }
        case 'FileSystem:Uploads':
          if (local === undefined) {
            throw new FileSourceError('unavailable', `upload ${ref} is in the FileSystem store: set source.files.fileSystemPath`, false)
          }
          return local.open(upload.extension === undefined ? ref : `${ref}.${upload.extension}`, options)
        case 'AmazonS3:Uploads':
          if (s3 === undefined) {
            throw new FileSourceError('unavailable', `upload ${ref} is in the AmazonS3 store: set source.files.s3`, false)
          }
          if (upload.s3Key === undefined) {
            throw new FileSourceError('missing', `upload ${ref}: its record has no AmazonS3.path`, false)
          }
          return s3.open(upload.s3Key, options)
        default:
          throw new FileSourceError(
            'unavailable',
            `upload ${ref} is in the store ${JSON.stringify(upload.store)}, which chatferry does not read (${READ_STORES.join(', ')})`,
            false,
          )
      }
    },
    async close(): Promise<void> {
      uploads = undefined
      grid = undefined
      await s3?.close?.()
    },
  }
}
