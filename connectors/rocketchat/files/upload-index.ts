/**
 * The `rocketchat_uploads` collection of the dump, as the files reader needs it: per upload `_id`,
 * the store that holds its bytes (`store`: `GridFS:Uploads`, `FileSystem:Uploads`,
 * `AmazonS3:Uploads`, …), its `extension` (the FileSystem store names the file `<_id>.<extension>`)
 * and its S3 key (`AmazonS3.path`). One scan, kept in memory: it grows with uploads, never with
 * their bytes. Damaged or id-less documents are left out (their files then read as `missing`).
 */
import { stat } from 'node:fs/promises'

import type { Document } from 'bson'

import { readDumpDocuments } from '../dump/bson-file.ts'

/** What of one upload record the reader uses. */
export interface UploadRecord {
  readonly store: string
  readonly extension?: string
  /** `AmazonS3.path`: the object key in the S3 store. */
  readonly s3Key?: string
}

/** The collection's name in the dump. */
export const UPLOADS_COLLECTION = 'rocketchat_uploads'

/** A document id as the dump has it: a string, or an ObjectId's hex. */
export function idOf(value: unknown): string | undefined {
  if (typeof value === 'string' && value !== '') {
    return value
  }
  if (value !== null && typeof value === 'object' && typeof (value as { toHexString?: unknown }).toHexString === 'function') {
    return (value as { toHexString(): string }).toHexString()
  }
  return undefined
}

function recordOf(doc: Document): UploadRecord {
  const s3 = doc.AmazonS3 as { path?: unknown } | undefined
  return {
    store: typeof doc.store === 'string' ? doc.store : '',
    ...(typeof doc.extension === 'string' && doc.extension !== '' ? { extension: doc.extension } : {}),
    ...(typeof s3?.path === 'string' && s3.path !== '' ? { s3Key: s3.path } : {}),
  }
}

/** Reads `rocketchat_uploads.bson`; an empty map when the dump has no such file. */
export async function readUploadIndex(file: string, signal?: AbortSignal): Promise<Map<string, UploadRecord>> {
  const index = new Map<string, UploadRecord>()
  const exists = await stat(file).then(
    (s) => s.isFile(),
    () => false,
  )
  if (!exists) {
    return index
  }
  for await (const batch of readDumpDocuments(file, undefined, signal)) {
    for (const d of batch) {
      const id = d.doc === undefined ? undefined : idOf(d.doc._id)
      if (id !== undefined && d.doc !== undefined) {
        index.set(id, recordOf(d.doc))
      }
    }
  }
  return index
}
