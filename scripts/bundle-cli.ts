/**
 * Bundles the CLI into a few JavaScript files (`npm run build`, run by `npm pack`): the command
 * line as `<out>/chatferry.mjs` and the sandbox's template warm-up (`bin/prepare.js`) as
 * `<out>/warm-cache.mjs`.
 *
 * Why a bundle and not the compiler's one file per module: a command loaded ~1,300 modules (ours,
 * kysely's 258, zod's, yaml's) at every start, about 1 CPU-second before it did anything; the
 * bundle starts in about a third of that. Scheduled deltas, `status` polls and the test suite's
 * CLI processes all pay that start.
 *
 * Left outside the bundle, loaded from node_modules as before: Node's modules; PGlite (it finds
 * its WebAssembly and data files next to its own modules); pg's optional native and Cloudflare
 * drivers (never installed). The packages loaded by `createRequire` (the S3 SDK, prom-client,
 * pino-pretty, cli-progress) stay outside on their own: the bundler does not follow a require
 * made at run time.
 *
 * The tests run the same bundle (test/global-setup.ts builds it into node_modules/.cache).
 */
import { rmSync } from 'node:fs'
import { builtinModules } from 'node:module'
import { resolve } from 'node:path'

import { build } from 'rolldown'

const ROOT = resolve(import.meta.dirname, '..')

/** The packages imported by name that the bundle leaves to node_modules (see the header). */
const EXTERNAL_PACKAGES = ['@electric-sql/pglite', 'pg-native', 'pg-cloudflare']

function isExternal(id: string): boolean {
  if (id.startsWith('node:') || builtinModules.includes(id)) {
    return true
  }
  return EXTERNAL_PACKAGES.some((p) => id === p || id.startsWith(`${p}/`))
}

/**
 * One self-contained file per entry, each with what it loads late inlined: split into shared
 * chunks, a chunk loaded late would import the entry's own chunk, whose top-level `await main()`
 * never settles before it — the process would wait forever.
 */
export const ENTRIES: Record<string, string> = {
  'chatferry.mjs': 'src/cli/main.ts',
  'warm-cache.mjs': 'src/sandbox/warm-cache.ts',
}

/** Bundles one entry (a path under the checkout) into one file; resolves when it is on disk. */
export async function bundleEntry(input: string, outFile: string): Promise<void> {
  await build({
    input: resolve(ROOT, input),
    platform: 'node',
    external: isExternal,
    // PGlite's and pg-boss's own patterns (direct eval, circular imports inside a package) are
    // theirs; a real problem fails the build or the tests that run the bundle.
    logLevel: 'silent',
    output: { file: outFile, format: 'esm', codeSplitting: false },
  })
}

/** Writes every entry into `outDir` (emptied first). */
export async function bundleCli(outDir: string): Promise<void> {
  rmSync(outDir, { recursive: true, force: true })
  for (const [file, input] of Object.entries(ENTRIES)) {
    await bundleEntry(input, resolve(outDir, file))
  }
}

if (import.meta.main) {
  const out = resolve(process.argv[2] ?? resolve(ROOT, 'dist'))
  await bundleCli(out)
  process.stdout.write(`bundled the CLI into ${out}\n`)
}
