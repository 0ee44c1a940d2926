/**
 * The Zulip connector's files reader (`files()`): a message file's `zerver_attachment.path_id`
 * under `<LOCAL_UPLOADS_DIR>/files/` (Zulip's local backend writes it there), or the key `path_id`
 * of the `S3_AUTH_UPLOADS_BUCKET` (its S3 backend). A `LOCAL_UPLOADS_DIR` without `files/` is a
 * configuration error naming `source.files.directory`.
 */
import { join } from 'node:path'

import type { FileReader } from '../../src/model/files.ts'
import { requireDirectory } from '../files/check-directory.ts'
import { localDirectoryReader } from '../files/local-reader.ts'
import { s3ObjectReader } from '../files/s3-reader.ts'
import type { FileSource } from '../files/settings.ts'

export function zulipFilesReader(files: FileSource): FileReader {
  if (files.kind === 's3') {
    return s3ObjectReader(files)
  }
  const what = "Zulip's LOCAL_UPLOADS_DIR (/home/zulip/uploads on a standard install), holding files/"
  requireDirectory('source.files.directory', files.directory, what)
  requireDirectory('source.files.directory', join(files.directory, 'files'), what)
  return localDirectoryReader(join(files.directory, 'files'))
}
