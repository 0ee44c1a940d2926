/**
 * The local directory store: copies written under `directory` by key (`sha256/ab/<hex>.png`), for
 * the embedded default and the demo. Each write goes to a temporary name in the target folder and
 * is renamed into place, so a reader (or a crash) never sees half a file under a key. The
 * operator serves the directory at `publicBaseUrl`; the demo serves it itself and passes that
 * base. There is no metadata beside the bytes: whoever serves the directory types files by their
 * extension, which is why keys carry one.
 */
import { randomUUID } from 'node:crypto'
import { copyFile, mkdir, readFile, rename, rm, stat as fsStat, writeFile } from 'node:fs/promises'
import { dirname, join, resolve, sep } from 'node:path'

import { ChatferryError } from '../../errors.ts'
import type { FileStore, StoredObject } from '../../model/files.ts'
import type { FileStoreConfig } from '../config.ts'
import { publicUrlOf } from './public-url.ts'
import { storeConfigError, StoreUnavailableError } from './store-errors.ts'

export type LocalStoreConfig = Extract<FileStoreConfig, { kind: 'local' }>

export interface LocalStoreOptions {
  /** The base URL the directory is served at when the configuration has none (the demo's own server). */
  readonly publicBaseUrl?: string
}

export function openLocalStore(config: LocalStoreConfig, options: LocalStoreOptions = {}): FileStore {
  const root = resolve(config.directory)
  const base = config.publicBaseUrl ?? options.publicBaseUrl
  if (base === undefined) {
    throw new ChatferryError('CONFIG_INVALID', `files.store.publicBaseUrl: the URL ${root} is served at is needed to link the copies`)
  }
  const description = `the directory ${root}`
  const pathOf = (key: string): string => {
    const path = resolve(root, key)
    if (key === '' || key.split('/').some((s) => s === '..' || s === '') || !path.startsWith(root + sep)) {
      throw new Error(`not a key inside the store: ${JSON.stringify(key)}`)
    }
    return path
  }
  const unavailable = (err: unknown, what: string) =>
    new StoreUnavailableError(description, `${what}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, { cause: err })

  return {
    description,
    async check() {
      const probe = join(root, `.chatferry-check-${randomUUID()}`)
      try {
        await mkdir(root, { recursive: true })
        await writeFile(probe, 'chatferry checks that it can write here\n')
        await readFile(probe)
        await rm(probe)
      } catch (err) {
        throw storeConfigError(description, `cannot write and read there (${(err as NodeJS.ErrnoException).code ?? 'error'})`)
      }
    },
    async stat(key): Promise<StoredObject | undefined> {
      try {
        return { size: (await fsStat(pathOf(key))).size }
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
          return undefined
        }
        throw unavailable(err, `looking up ${key}`)
      }
    },
    async put(key, source) {
      const target = pathOf(key)
      const temp = `${target}.${randomUUID()}.tmp`
      try {
        await mkdir(dirname(target), { recursive: true })
        await (typeof source === 'string' ? copyFile(source, temp) : writeFile(temp, source))
        await rename(temp, target)
      } catch (err) {
        await rm(temp, { force: true }).catch(() => undefined)
        throw unavailable(err, `writing ${key}`)
      }
    },
    publicUrl: (key) => publicUrlOf(base, key),
  }
}
