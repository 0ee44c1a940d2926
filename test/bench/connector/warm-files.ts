/**
 * Warming the OS file cache for the file systems of the connector benchmark: every byte of the
 * fixture read once through one reusable buffer and dropped, so the bench child's heap (and its
 * peak RSS, a high-water mark) is not grown by a parse before chatferry's read is measured.
 */
import { closeSync, openSync, readdirSync, readSync, statSync } from 'node:fs'
import { join } from 'node:path'

/** Reads every file at `paths` (a folder: the files in it, one level deep) once, keeping nothing. */
export function warmFiles(paths: readonly string[]): Promise<void> {
  const buf = Buffer.allocUnsafe(1024 * 1024)
  for (const path of paths) {
    const files = statSync(path).isDirectory() ? readdirSync(path).map((f) => join(path, f)) : [path]
    for (const file of files) {
      const fd = openSync(file, 'r')
      try {
        while (readSync(fd, buf) > 0) {
          // the bytes only pass through the cache
        }
      } finally {
        closeSync(fd)
      }
    }
  }
  return Promise.resolve()
}
