/**
 * The locator of a Rocket.Chat upload: `{reader: rocketchat, ref: <upload _id>, host}`, the host
 * by the store its `rocketchat_uploads` record names (what the files lane paces by): `gridfs` (the
 * dump), `local` (the FileSystem store), the S3 endpoint's host, or `rocketchat` when the record
 * is not in the dump or names another store (the reader then says why).
 */
import type { FileLocator } from '../../../src/model/files.ts'
import { s3Host } from '../../files/s3-reader.ts'
import type { RocketChatFiles } from './settings.ts'
import type { UploadRecord } from './upload-index.ts'

export const ROCKETCHAT_READER = 'rocketchat'

export function uploadLocator(files: RocketChatFiles, uploads: ReadonlyMap<string, UploadRecord>): (fileId: string) => FileLocator {
  const s3 = files.s3 === undefined ? 'rocketchat' : s3Host(files.s3)
  return (fileId) => {
    const store = uploads.get(fileId)?.store
    const host = store === 'GridFS:Uploads' ? 'gridfs' : store === 'FileSystem:Uploads' ? 'local' : store === 'AmazonS3:Uploads' ? s3 : 'rocketchat'
    return { reader: ROCKETCHAT_READER, ref: fileId, host }
  }
}
