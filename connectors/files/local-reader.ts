/**
 * A {@link FileReader} over a local directory (a Mattermost data directory, Zulip's
 * `LOCAL_UPLOADS_DIR/files`, a Slack export folder, Rocket.Chat's FileSystem store…): `ref` is a
 * path under the root. The file is streamed from `offset` (memory bounded whatever its size);
 * its size comes from the open handle's stat. A missing file is `missing`, a permission refusal
 * `denied`, and a path that leads out of the root — `..`, absolute, or a symlink pointing out —
 * is `denied` with the reason, before anything is read.
 */
import { constants } from 'node:fs'
import { open, realpath } from 'node:fs/promises'
import { addAbortSignal } from 'node:stream'

import { type FileReader, FileSourceError, type OpenedFile, type OpenOptions } from '../../src/model/files.ts'
import { isInside, pathUnder } from './safe-path.ts'

/** Maps a file-system error about `ref` to the files lane's causes. */
export function fsFailure(ref: string, err: unknown): FileSourceError {
  const code = (err as { code?: unknown }).code
  const where = JSON.stringify(ref)
  switch (code) {
    case 'ENOENT':
    case 'ENOTDIR':
      return new FileSourceError('missing', `${where}: no such file in the data directory`, false)
    case 'EISDIR':
      return new FileSourceError('missing', `${where}: is a directory, not a file`, false)
    case 'EACCES':
    case 'EPERM':
      return new FileSourceError('denied', `${where}: permission denied reading it`, false)
    case 'ELOOP':
      return new FileSourceError('denied', `${where}: a symbolic link where a file was expected`, false)
    case 'EMFILE':
    case 'ENFILE':
    case 'EIO':
    case 'EAGAIN':
    case 'EBUSY':
      return new FileSourceError('unavailable', `${where}: ${String(code)} reading it`, true)
    default:
      return new FileSourceError('unavailable', `${where}: ${err instanceof Error ? err.message : String(err)}`, false)
  }
}

/** Reads files under `root` (absolute or relative to the working directory). */
export function localDirectoryReader(root: string): FileReader {
  let realRoot: Promise<string> | undefined
  return {
    async open(ref: string, options: OpenOptions = {}): Promise<OpenedFile> {
      options.signal?.throwIfAborted()
      realRoot ??= realpath(root)
      const rootPath = await realRoot.catch((err: unknown) => {
        realRoot = undefined
        throw fsFailure('.', err)
      })
      const wanted = pathUnder(rootPath, ref)
      let real: string
      try {
        real = await realpath(wanted)
      } catch (err) {
        throw fsFailure(ref, err)
      }
      if (!isInside(rootPath, real)) {
        throw new FileSourceError('denied', `${JSON.stringify(ref)}: a symbolic link out of the data directory`, false)
      }
      let handle
      try {
        handle = await open(real, constants.O_RDONLY | constants.O_NOFOLLOW)
      } catch (err) {
        throw fsFailure(ref, err)
      }
      try {
        const stat = await handle.stat()
        if (!stat.isFile()) {
          throw new FileSourceError('missing', `${JSON.stringify(ref)}: not a regular file`, false)
        }
        const start = Math.min(options.offset ?? 0, stat.size)
        const stream = handle.createReadStream({ start, autoClose: true })
        const body = options.signal === undefined ? stream : addAbortSignal(options.signal, stream)
        return { body, size: stat.size, start }
      } catch (err) {
        await handle.close()
        throw err instanceof FileSourceError ? err : fsFailure(ref, err)
      }
    },
  }
}
