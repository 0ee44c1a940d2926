/**
 * The files of an in-house schema (`source.files` of the generic-sql connector): which key of
 * each attachment object (the `attachments` JSON column's items) names the file's bytes, and
 * where — a URL fetched over HTTP (`kind: url`, with an optional bearer token), a path under a
 * directory (`kind: local`), or a key in an S3-compatible bucket (`kind: s3`). The attachment then
 * carries the locator `{reader, ref: that value, host}`; an attachment without the key carries none
 * (the files lane reads its `url`).
 */
import { isAbsolute, relative, resolve } from 'node:path'

import { z } from 'zod'

import type { FileLocator, FileReader } from '../../src/model/files.ts'
import { requireDirectory } from '../files/check-directory.ts'
import { bearerHttpReader } from '../files/http-reader.ts'
import { localDirectoryReader } from '../files/local-reader.ts'
import { s3Host, s3ObjectReader } from '../files/s3-reader.ts'
import { S3FilesSchema } from '../files/settings.ts'

/** An attachment object's key: a plain name. */
const fieldName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be a plain key name (letters, digits, _)')

export const GenericSqlFilesSchema = z.discriminatedUnion('kind', [
  z
    .object({
      kind: z.literal('url'),
      /** The attachment key holding the download URL. @default url */
      field: fieldName.default('url'),
      /** Sent as `Authorization: Bearer` to the URL's own host; a secret (`${VAR}`). Absent: no header. */
      token: z.string().min(1).optional(),
    })
    .strict(),
  z
    .object({
      kind: z.literal('local'),
      /** The attachment key holding the path. @default path */
      field: fieldName.default('path'),
      /** The directory the paths are under (an absolute path stored inside it is taken relative to it). */
      directory: z.string().min(1),
    })
    .strict(),
  S3FilesSchema.extend({
    /** The attachment key holding the object key. @default key */
    field: fieldName.default('key'),
  }),
])
export type GenericSqlFiles = z.output<typeof GenericSqlFilesSchema>

/** The reader id on this connector's locators. */
export const GENERIC_SQL_READER = 'generic-sql'

/** The ref of a stored path: relative to the directory when it is an absolute path inside it, else as stored. */
export function pathRef(directory: string, stored: string): string {
  if (!isAbsolute(stored)) {
    return stored
  }
  const rel = relative(resolve(directory), stored)
  return rel === '' || rel.startsWith('..') || isAbsolute(rel) ? stored : rel.split('\\').join('/')
}

/** The locator of one attachment object, or undefined when it has no (text) value under the key. */
export function genericSqlLocator(files: GenericSqlFiles, item: Record<string, unknown>): FileLocator | undefined {
  const value = item[files.field]
  if (typeof value !== 'string' || value.trim() === '') {
    return undefined
  }
  switch (files.kind) {
    case 'url': {
      let host: string
      try {
        host = new URL(value).host
      } catch {
        return undefined
      }
      // Without a token the shared http reader of the files lane reads it.
      return { reader: files.token === undefined ? 'http' : GENERIC_SQL_READER, ref: value, host }
    }
    case 'local':
      return { reader: GENERIC_SQL_READER, ref: pathRef(files.directory, value), host: 'local' }
    default:
      return { reader: GENERIC_SQL_READER, ref: value, host: s3Host(files) }
  }
}

/** The reader of `files`; a missing directory is a configuration error naming `source.files.directory`. */
export function genericSqlFilesReader(files: GenericSqlFiles): FileReader {
  switch (files.kind) {
    case 'url':
      return bearerHttpReader(files.token === undefined ? {} : { token: files.token })
    case 'local':
      requireDirectory('source.files.directory', files.directory, 'the directory the attachments’ paths are under')
      return localDirectoryReader(files.directory)
    default:
      return s3ObjectReader(files)
  }
}
