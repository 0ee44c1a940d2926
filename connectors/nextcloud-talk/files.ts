/**
 * Where a file shared in a Talk room keeps its bytes, for the files lane (`source.files`): the
 * share's file id (`oc_share.item_source`) → its `oc_filecache.path` in its storage
 * (`oc_storages.id`):
 *
 * - a home storage `home::<uid>`: `<datadirectory>/<uid>/<path>` (`path` starts with `files/`),
 *   ref `<uid>/<path>` under the configured data directory;
 * - a local storage `local::<dir>/` (an external or group folder on disk): `<dir><path>`, ref made
 *   relative to the data directory when inside it (else absolute, which the reader refuses);
 * - an object-store storage `object::user:<uid>` / `object::store:<id>` (S3 as primary storage):
 *   the object `urn:oid:<fileid>` of the configured bucket.
 *
 * A storage of another kind (SMB, WebDAV external storages) gets no locator.
 */
import { isAbsolute, relative, resolve } from 'node:path'

import type { FileLocator, FileReader } from '../../src/model/files.ts'
import type { FileSource } from '../files/settings.ts'
import { fileSourceHost, fileSourceReader } from '../files/source-reader.ts'

export const NEXTCLOUD_READER = 'nextcloud-talk'

/** The ref of a file in its storage, or undefined when it is not in the configured store. */
export function nextcloudRef(files: FileSource, fileId: string, storage: string, path: string): string | undefined {
  if (files.kind === 's3') {
    return storage.startsWith('object::') ? `urn:oid:${fileId}` : undefined
  }
  const home = /^home::(.+)$/.exec(storage)
  if (home !== null) {
    return `${home[1] as string}/${path}`
  }
  const local = /^local::(.+)$/.exec(storage)
  if (local !== null) {
    const full = resolve(local[1] as string, path)
    const rel = relative(resolve(files.directory), full)
    return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel) ? rel.split('\\').join('/') : full
  }
  return undefined
}

/** The locator of a shared file, or undefined. */
export function nextcloudLocator(files: FileSource, fileId: string, storage: string, path: string): FileLocator | undefined {
  const ref = nextcloudRef(files, fileId, storage, path)
  return ref === undefined ? undefined : { reader: NEXTCLOUD_READER, ref, host: fileSourceHost(files) }
}

export function nextcloudFilesReader(files: FileSource): FileReader {
  return fileSourceReader(files, 'source.files', "Nextcloud's datadirectory (config.php), holding <uid>/files/")
}
