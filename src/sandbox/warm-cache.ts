/**
 * Builds the sandbox's cached store template (see `templateFile` in sandbox-store.ts) right after
 * `npm ci` / `npm install` (the package's `prepare` script), so even the first
 * `chatferry sandbox` on a fresh machine starts without running initdb. Never fails the install:
 * without the template the sandbox only starts a little slower.
 */
import { openSandboxStore } from './sandbox-store.ts'

try {
  const store = await openSandboxStore({ dir: 'memory://' })
  await store.close()
} catch (err) {
  process.stderr.write(`chatferry: could not prepare the sandbox template (${(err as Error).message}); the first sandbox start will be slower\n`)
}
