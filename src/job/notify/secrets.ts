/**
 * The job's secrets, as strings to scrub from anything a notification sends: every value under a
 * secret key of the configuration (the API key, passwords, tokens, the fleet's keys), the
 * passwords inside its URLs, and the hooks' own URLs and headers.
 */
import { SECRET_KEYS } from '../../logger.ts'

export function secretsOf(config: unknown): string[] {
  const out = new Set<string>()
  const walk = (value: unknown, key: string, path: readonly string[]) => {
    if (typeof value === 'string') {
      if (SECRET_KEYS.has(key) && path[0] !== 'policies') {
        out.add(value)
      }
      if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) {
        try {
          const u = new URL(value)
          if (u.password) {
            out.add(decodeURIComponent(u.password))
            out.add(u.password)
          }
        } catch {
          // Not a URL after all: nothing inside it to find.
        }
      }
      if (path[0] === 'notify' && (key === 'url' || path.includes('headers'))) {
        out.add(value)
      }
      return
    }
    if (value !== null && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) {
        walk(v, k, [...path, k])
      }
    }
  }
  walk(config, '', [])
  return [...out]
}
