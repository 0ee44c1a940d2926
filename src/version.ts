import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * The package's own package.json: the nearest one above this file named `chatferry`. Found by
 * walking up because this module runs from `src/` in a checkout and bundled into `dist/chatferry.mjs`
 * when built (`npm run build`).
 */
function packageVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url))
  for (;;) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string }
      if (pkg.name === 'chatferry' && typeof pkg.version === 'string') {
        return pkg.version
      }
    } catch {
      // no package.json here: keep walking up
    }
    const parent = dirname(dir)
    if (parent === dir) {
      return 'unknown'
    }
    dir = parent
  }
}

/** chatferry's version, from package.json; named in every report. */
export const VERSION: string = packageVersion()

/**
 * How the operator runs chatferry, for the commands suggested in output: the installed package
 * (bundled into `dist/chatferry.mjs`, on PATH as `chatferry`) or a checkout (`npm run chatferry --`).
 */
export const INVOCATION: string = /\/dist\/chatferry\.mjs$/.test(import.meta.url.replaceAll('\\', '/')) ? 'chatferry' : 'npm run chatferry --'
