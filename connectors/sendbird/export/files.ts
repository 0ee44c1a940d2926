/**
 * The files of one data type's Data Export (users, channels or messages): each configured path a
 * ZIP (what Sendbird's `file.url` downloads) or the folder it unpacks to, opened read-only with the
 * Slack export's archive reader (listing first, each file streamed under the caps). Its data files
 * are every `.json` (a JSON array of records) and `.csv` (a header, then one record per row) file
 * at the top or one folder deep, in path order. A file is read only when its turn comes.
 */
import { statSync } from 'node:fs'
import { resolve } from 'node:path'

import { ChatferryError } from '../../../src/errors.ts'
import type { ArchiveLimits, ExportArchive } from '../../archive/archive.ts'
import { EntryUnreadable } from '../../archive/archive.ts'
import { arrayFileBatches } from '../../archive/array-file.ts'
import { openFolderArchive } from '../../archive/folder.ts'
import { openZipArchive } from '../../archive/zip.ts'
import { csvObject, csvRecords } from './csv.ts'

export interface DataFile {
  readonly archive: ExportArchive
  readonly path: string
  /** `<export path>!<file path>`, for messages. */
  readonly label: string
}

/** One record of a data file: its object, or why it cannot be read. */
export type FileItem = { readonly index: number; readonly value: unknown } | { readonly index: number; readonly error: string }

const DATA_FILE = /\.(json|csv)$/i

/** Opens the exports at `paths`; fails SOURCE_UNAVAILABLE naming the path that cannot be read. */
export async function openExports(paths: readonly string[], limits: ArchiveLimits): Promise<{ archives: ExportArchive[]; files: DataFile[] }> {
  const archives: ExportArchive[] = []
  try {
    for (const p of paths) {
      const path = resolve(p)
      let isDir: boolean
      try {
        isDir = statSync(path).isDirectory()
      } catch (err) {
        throw new ChatferryError(
          'SOURCE_UNAVAILABLE',
          `cannot read the Sendbird export ${p}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
          { cause: err },
        )
      }
      const { archive, totalBytes } = isDir ? openFolderArchive(path, limits) : await openZipArchive(path, limits)
      archives.push(archive)
      if (totalBytes > limits.maxArchiveBytes) {
        throw new ChatferryError(
          'SOURCE_INVALID',
          `the Sendbird export ${p} inflates to ${totalBytes} bytes, over source.export.maxArchiveBytes (${limits.maxArchiveBytes})`,
        )
      }
    }
  } catch (err) {
    await Promise.all(archives.map((a) => a.close()))
    throw err
  }
  return { archives, files: archives.flatMap(dataFiles) }
}

function dataFiles(archive: ExportArchive): DataFile[] {
  const top = archive.topFiles().filter((f) => DATA_FILE.test(f))
  const nested = archive.folders().flatMap((d) =>
    archive
      .filesIn(d)
      .filter((f) => DATA_FILE.test(f))
      .map((f) => `${d}/${f}`),
  )
  return [...top, ...nested].map((path) => ({ archive, path, label: `${archive.label}!${path}` }))
}

/** A data file's records in batches, from record `from` on (JSON: array elements; CSV: rows after the header). */
export async function* fileItems(file: DataFile, csvDelimiter: string, maxElementBytes: number): AsyncGenerator<FileItem[]> {
  if (/\.json$/i.test(file.path)) {
    yield* arrayFileBatches(file.archive, file.path, maxElementBytes)
    return
  }
  let stream: AsyncIterable<Buffer>
  try {
    stream = await file.archive.open(file.path)
  } catch (err) {
    if (err instanceof EntryUnreadable) {
      yield [{ index: 0, error: `the file cannot be read: ${err.message}` }]
      return
    }
    throw err
  }
  let header: readonly string[] | undefined
  let batch: FileItem[] = []
  let next = 0
  try {
    for await (const rec of csvRecords(stream, csvDelimiter, maxElementBytes)) {
      if (rec.index === 0) {
        if ('error' in rec) {
          yield [{ index: 0, error: `its header ${rec.error}` }]
          return
        }
        header = rec.cells
        continue
      }
      const index = rec.index - 1
      next = index + 1
      batch.push('error' in rec ? { index, error: rec.error } : { index, value: csvObject(header ?? [], rec.cells) })
      if (batch.length >= 1000) {
        yield batch
        batch = []
      }
    }
  } catch (err) {
    if (!(err instanceof EntryUnreadable)) {
      throw err
    }
    batch.push({ index: next, error: `the file cannot be read on: ${err.message}` })
  }
  if (batch.length > 0) {
    yield batch
  }
}
