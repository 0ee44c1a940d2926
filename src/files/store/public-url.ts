/**
 * A stored object's permanent public URL: the configured public base URL (a bucket website, a
 * CDN, the directory the operator serves) followed by the key, each path segment encoded. Never
 * presigned and never expiring: a migrated message keeps this URL for good.
 */

/** `https://cdn.example.com/files` + `chat/sha256/ab/x.png` → `https://cdn.example.com/files/chat/sha256/ab/x.png`. */
export function publicUrlOf(baseUrl: string, key: string): string {
  const base = baseUrl.replace(/\/+$/, '')
  return `${base}/${key.split('/').map(encodeURIComponent).join('/')}`
}

/** A key prefix as the stores use it: no leading slash, one trailing slash when not empty (`chat` → `chat/`). */
export function normalisePrefix(prefix: string): string {
  const p = prefix.replace(/^\/+/, '')
  return p === '' || p.endsWith('/') ? p : `${p}/`
}
