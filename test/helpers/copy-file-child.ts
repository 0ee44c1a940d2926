/**
 * A process that copies one file with copyFile and prints its outcome as JSON: the tests kill it
 * (SIGKILL) in the middle of a download or of a multipart upload and then copy again, as a rerun
 * of the files lane after a crash would. Its settings come as JSON in `CF_COPY_CHILD`.
 */
import type { FileStoreConfig } from '../../src/files/config.ts'
import { copyFile } from '../../src/files/copy/copy-file.ts'
import type { FileToCopy } from '../../src/files/copy/copy-outcome.ts'
import { createHostPacer } from '../../src/files/pace/host-pacer.ts'
import { createHttpReader } from '../../src/files/read/http-reader.ts'
import { openFileStore } from '../../src/files/store/open-store.ts'

export interface CopyChildSettings {
  readonly file: FileToCopy
  readonly store: FileStoreConfig
  readonly spoolDir: string
  readonly memoryBytes: number
}

const settings = JSON.parse(process.env.CF_COPY_CHILD ?? '{}') as CopyChildSettings
const store = openFileStore(settings.store, { client: { maxAttempts: 1 } })
const outcome = await copyFile(settings.file, {
  reader: createHttpReader(),
  store,
  spoolDir: settings.spoolDir,
  limits: { maxBytes: 1024 ** 3, stallTimeoutMs: 120_000, attempts: 1, memoryBytes: settings.memoryBytes },
  pacer: createHostPacer({ perHost: { concurrency: 1, requestsPerSecond: 100 } }),
})
process.stdout.write(`${JSON.stringify(outcome)}\n`)
await store.close?.()
