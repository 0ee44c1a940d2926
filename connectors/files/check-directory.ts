/**
 * The configuration check of a local file source: the directory must exist (and be a
 * directory) before any file is read, or the job fails with the setting named
 * (`CONFIG_INVALID`), not with one `missing` per file.
 */
import { statSync } from 'node:fs'

import { ChatferryError } from '../../src/errors.ts'

/** Throws CONFIG_INVALID naming `field` (e.g. `source.files.directory`) when `dir` is not a directory. */
export function requireDirectory(field: string, dir: string, what: string): void {
  let isDir: boolean
  try {
    isDir = statSync(dir).isDirectory()
  } catch (err) {
    const code = (err as { code?: unknown }).code
    throw new ChatferryError(
      'CONFIG_INVALID',
      `${field}: ${dir} ${code === 'ENOENT' ? 'does not exist' : `cannot be read (${String(code)})`}; it must be ${what}`,
    )
  }
  if (!isDir) {
    throw new ChatferryError('CONFIG_INVALID', `${field}: ${dir} is not a directory; it must be ${what}`)
  }
}
