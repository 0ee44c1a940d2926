/**
 * Where a file reference (a path a legacy database stores: Mattermost's `FileInfo.Path`, Zulip's
 * `path_id`, an export's `files/…`) may lead under its root directory. A reference is data from
 * the legacy system, so it is checked before it touches the disk: an absolute path, a `..`
 * segment, a NUL byte or a backslash walking out is refused (`denied`, with the reason), and a
 * symlink inside the root that points outside it is refused too (see local-reader.ts).
 */
import { isAbsolute, relative, resolve, sep } from 'node:path'

import { FileSourceError } from '../../src/model/files.ts'

/** Why `ref` may not be read under a root, or undefined when it may. */
export function refProblem(ref: string): string | undefined {
  if (ref === '') {
    return 'the path is empty'
  }
  if (ref.includes('\0')) {
    return 'the path holds a NUL byte'
  }
  if (isAbsolute(ref) || /^[a-zA-Z]:[\\/]/.test(ref) || ref.startsWith('\\')) {
    return 'the path is absolute; only paths under the data directory are read'
  }
  if (ref.split(/[\\/]/).some((segment) => segment === '..')) {
    return "the path has a '..' segment; only paths under the data directory are read"
  }
  return undefined
}

/** `ref` resolved under `root`, or a `denied` FileSourceError naming the reason. */
export function pathUnder(root: string, ref: string): string {
  const problem = refProblem(ref)
  if (problem !== undefined) {
    throw new FileSourceError('denied', `${JSON.stringify(ref)}: ${problem}`, false)
  }
  const full = resolve(root, ref)
  if (!isInside(root, full)) {
    throw new FileSourceError('denied', `${JSON.stringify(ref)}: resolves outside the data directory`, false)
  }
  return full
}

/** Whether `path` is `root` itself or below it (both absolute, already resolved). */
export function isInside(root: string, path: string): boolean {
  const rel = relative(root, path)
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel))
}
