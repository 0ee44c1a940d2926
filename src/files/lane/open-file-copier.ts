/**
 * The copier the files lane calls for each file: the job's store (checked before any download —
 * wrong credentials, a missing bucket or a refused write are a configuration error), the readers
 * (the `http` reader for attachments read from their URL; each connector's own reader by its id),
 * the pacing per source host and the bandwidth cap, the spool directory, and `copyFile`.
 */
import { join } from 'node:path'

import type { Logger } from 'pino'

import type { FileReader, FileStore } from '../../model/files.ts'
import { copyFile } from '../copy/copy-file.ts'
import { createBandwidthLimit } from '../pace/bandwidth-limit.ts'
import { createHostPacer } from '../pace/host-pacer.ts'
import { createHttpReader } from '../read/http-reader.ts'
import { openFileStore } from '../store/open-store.ts'
import type { CopyOutcome, FileCopier } from './file-copier.ts'
import type { ResolvedFilesJob } from './files-job.ts'

export interface OpenedCopier {
  readonly copy: FileCopier
  readonly store: FileStore
  close(): Promise<void>
}

export interface CopierOptions {
  readonly logger: Logger
  readonly signal?: AbortSignal
  /** Readers by id besides `http` (a connector's: files-readers). */
  readonly readers?: Readonly<Record<string, FileReader>>
  /** A local store's public base URL when the configuration has none (the demo serves it itself). */
  readonly localPublicBaseUrl?: string
}

/** Opens the store and readers of a job under `files.mode: rehost` and checks the store. */
export async function openFileCopier(job: ResolvedFilesJob, options: CopierOptions): Promise<OpenedCopier> {
  const settings = job.files
  if (settings.store === undefined) {
    throw new Error('files.mode rehost needs files.store')
  }
  const store = openFileStore(settings.store, options.localPublicBaseUrl !== undefined ? { localPublicBaseUrl: options.localPublicBaseUrl } : {})
  await store.check(options.signal)
  const readers: Record<string, FileReader> = { http: createHttpReader(), ...options.readers }
  const pacer = createHostPacer({ perHost: settings.perHost, hosts: settings.hosts })
  const bandwidth = settings.bandwidthBytesPerSecond !== undefined ? createBandwidthLimit(settings.bandwidthBytesPerSecond) : undefined
  const spoolDir = settings.spoolDir ?? join(job.stateDir, 'files-spool')
  const copy: FileCopier = async (file, signal): Promise<CopyOutcome> => {
    const reader = readers[file.locator.reader]
    if (reader === undefined) {
      return { ok: false, cause: 'missing', reason: `no reader for ${file.locator.reader} files in this job`, retryable: false }
    }
    const outcome = await copyFile(
      { ...file, id: String(file.id) },
      {
        reader,
        store,
        spoolDir,
        pacer,
        bandwidth,
        signal,
        limits: { maxBytes: settings.maxBytes, stallTimeoutMs: settings.stallTimeoutSeconds * 1000, attempts: settings.attempts },
      },
    )
    return outcome.ok ? { ...outcome, sniffedType: outcome.sniffedType ?? outcome.contentType } : outcome
  }
  return {
    copy,
    store,
    async close() {
      await Promise.all(Object.values(readers).map((r) => r.close?.()))
      await store.close?.()
    },
  }
}
