/**
 * The store `files.store` names: an S3-compatible bucket or a local directory. Opening makes no
 * request; call `check()` before the first download.
 */
import type { FileStore } from '../../model/files.ts'
import type { FileStoreConfig } from '../config.ts'
import { openLocalStore } from './local-store.ts'
import { openS3Store, type S3StoreOptions } from './s3-store.ts'

export interface OpenStoreOptions extends S3StoreOptions {
  /** For a local store without `publicBaseUrl`: the URL its directory is served at (the demo's server). */
  readonly localPublicBaseUrl?: string
}

export function openFileStore(config: FileStoreConfig, options: OpenStoreOptions = {}): FileStore {
  if (config.kind === 's3') {
    return openS3Store(config, options)
  }
  return openLocalStore(config, options.localPublicBaseUrl === undefined ? {} : { publicBaseUrl: options.localPublicBaseUrl })
}
