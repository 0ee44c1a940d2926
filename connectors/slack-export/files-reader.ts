/**
 * The Slack export connector's files reader (`files()`): a ref inside the export (a ZIP or a
 * folder: files-locator.ts) is streamed out of it from an offset; a `https://` ref (`url_private`)
 * is fetched with the operator's `source.fileToken` as a bearer token, sent to Slack's own host
 * only and never logged. A login page Slack serves in place of the file comes back as
 * `text/html` for the files lane's checks.
 */
import { Readable } from 'node:stream'

import { type FileReader, FileSourceError, type OpenedFile, type OpenOptions } from '../../src/model/files.ts'
import { type ExportArchive, openArchive } from '../archive/archive.ts'
import { EntryUnreadable } from '../archive/guard.ts'
import { bearerHttpReader } from '../files/http-reader.ts'
import { refProblem } from '../files/safe-path.ts'
import type { SlackExportConfig } from './config.ts'

/** Reads the files of the export at `config.path`; the export is opened (its directory read) on the first file. */
export function slackFilesReader(config: SlackExportConfig): FileReader {
  const http = bearerHttpReader(config.fileToken === undefined ? {} : { token: config.fileToken })
  let archive: Promise<ExportArchive> | undefined
  const exportOf = () => {
    archive ??= openArchive(config.path, {
      maxEntryBytes: config.maxEntryBytes,
      maxArchiveBytes: config.maxArchiveBytes,
      maxElementBytes: config.maxElementBytes,
    })
    return archive
  }
  return {
    async open(ref: string, options: OpenOptions = {}): Promise<OpenedFile> {
      if (/^https?:\/\//i.test(ref)) {
        if (config.fileToken === undefined) {
          throw new FileSourceError('denied', `${ref}: Slack's url_private needs a token with files:read; set source.fileToken`, false)
        }
        return http.open(ref, options)
      }
      const problem = refProblem(ref)
      if (problem !== undefined) {
        throw new FileSourceError('denied', `${JSON.stringify(ref)}: ${problem}`, false)
      }
      options.signal?.throwIfAborted()
      const a = await exportOf()
      if (!a.hasEntry(ref)) {
        const refused = a.entryProblem(ref)
        if (refused !== undefined) {
          throw new FileSourceError('denied', `${JSON.stringify(ref)}: ${refused}`, false)
        }
        throw new FileSourceError('missing', `${JSON.stringify(ref)}: not in the Slack export ${config.path}`, false)
      }
      const size = a.sizeOf(ref)
      const start = Math.min(options.offset ?? 0, size)
      let bytes: AsyncIterable<Buffer>
      try {
        bytes = await a.open(ref, start)
      } catch (err) {
        if (err instanceof EntryUnreadable) {
          throw new FileSourceError('unavailable', `${JSON.stringify(ref)}: ${err.message}`, false)
        }
        throw new FileSourceError('unavailable', `${JSON.stringify(ref)}: ${err instanceof Error ? err.message : String(err)}`, true)
      }
      return { body: Readable.from(bytes, { objectMode: false }), size, start }
    },
    async close(): Promise<void> {
      const a = archive
      archive = undefined
      await (await a?.catch(() => undefined))?.close()
    },
  }
}
