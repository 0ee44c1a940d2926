/**
 * How a file's source URL appears in an error, a reason or a log: scheme, host and path only. The
 * query string (Slack's `?t=` tokens, presigned signatures), the fragment and any `user:password@`
 * are dropped, so a credential carried in a URL never leaves the reader.
 */
import type { FileLocator } from '../../model/files.ts'

/** `https://files.example.com/a/b.png` for `https://u:p@files.example.com/a/b.png?t=secret#x`. */
export function shownUrl(url: string): string {
  try {
    const u = new URL(url)
    return `${u.protocol}//${u.host}${u.pathname}`
  } catch {
    return '(a URL that does not parse)'
  }
}

/** A locator as a failure's reason names it: `http https://host/path`, `mattermost 20240101/ab/file.png`. */
export function shownLocator(locator: FileLocator): string {
  const ref = /^[a-z][a-z0-9+.-]*:\/\//i.test(locator.ref) ? shownUrl(locator.ref) : locator.ref
  return `${locator.reader} ${ref}`
}
