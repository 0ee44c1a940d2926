/**
 * The CLI the tests run as a process: the same bundle `npm run build` ships
 * (scripts/bundle-cli.ts), built from this checkout's sources once per test run by
 * test/global-setup.ts. `CHATFERRY_TEST_CLI=src` runs the TypeScript sources instead (no build,
 * about three times the start-up of each process).
 *
 * The bundle sits under node_modules/.cache so that it finds the packages it leaves outside
 * (PGlite, the S3 SDK, …) as the installed one does, in a folder of its own per checkout (git
 * worktrees may share one node_modules); it is written beside and renamed into place, so a
 * process still starting from the previous one is not cut off.
 */
import { createHash } from 'node:crypto'
import { mkdirSync, renameSync } from 'node:fs'
import { resolve } from 'node:path'

import { bundleEntry, ENTRIES } from '../../scripts/bundle-cli.ts'

const ROOT = resolve(import.meta.dirname, '../..')
const checkoutTag = createHash('sha256').update(ROOT).digest('hex').slice(0, 12)
const BUNDLE_DIR = resolve(ROOT, 'node_modules/.cache/chatferry-cli', checkoutTag)

export const CLI_SOURCE = resolve(ROOT, 'src/cli/main.ts')
export const CLI_BUNDLE = resolve(BUNDLE_DIR, 'chatferry.mjs')

/** What the tests start as `chatferry`: the bundle, or the sources under `CHATFERRY_TEST_CLI=src`. */
export const CLI = process.env.CHATFERRY_TEST_CLI === 'src' ? CLI_SOURCE : CLI_BUNDLE

/** Builds {@link CLI_BUNDLE} from the sources (a no-op when the tests run the sources). */
export async function buildCliBundle(): Promise<void> {
  if (CLI !== CLI_BUNDLE) {
    return
  }
  mkdirSync(BUNDLE_DIR, { recursive: true })
  const next = resolve(BUNDLE_DIR, `chatferry.${process.pid}.mjs`)
  const input = ENTRIES['chatferry.mjs']
  if (input === undefined) {
    throw new Error('scripts/bundle-cli.ts names no chatferry.mjs entry')
  }
  await bundleEntry(input, next)
  renameSync(next, CLI_BUNDLE)
}
