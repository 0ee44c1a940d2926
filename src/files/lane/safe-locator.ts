/**
 * A file's locator as logs and reports may show it: a URL without its query string, fragment or
 * user info (a legacy URL can carry a token there), anything else as it is (a locator holds no
 * credential by contract: src/model/files.ts).
 */
import type { FileLocator } from '../../model/files.ts'

export function safeRef(ref: string): string {
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(ref)) {
    return ref
  }
  try {
    const u = new URL(ref)
    return `${u.protocol}//${u.host}${u.pathname}${u.search !== '' ? '?…' : ''}`
  } catch {
    return ref.replace(/[?#].*$/, '?…')
  }
}

export function describeLocator(locator: FileLocator): string {
  return `${locator.reader}:${safeRef(locator.ref)}`
}
