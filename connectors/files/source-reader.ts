/**
 * A connector's files reader from its `source.files` setting: a local directory (checked to
 * exist first: a configuration error otherwise) or an S3 bucket; and the pacing host its
 * locators carry (`local`, or the S3 endpoint's host).
 */
import type { FileReader } from '../../src/model/files.ts'
import { requireDirectory } from './check-directory.ts'
import { localDirectoryReader } from './local-reader.ts'
import { s3Host, s3ObjectReader } from './s3-reader.ts'
import type { FileSource } from './settings.ts'

/** The reader of `files`; `field` names the setting in errors, `what` says what the directory must be. */
export function fileSourceReader(files: FileSource, field: string, what: string): FileReader {
  if (files.kind === 'local') {
    requireDirectory(`${field}.directory`, files.directory, what)
    return localDirectoryReader(files.directory)
  }
  return s3ObjectReader(files)
}

/** The host a locator of this source is paced by. */
export function fileSourceHost(files: FileSource): string {
  return files.kind === 'local' ? 'local' : s3Host(files)
}
