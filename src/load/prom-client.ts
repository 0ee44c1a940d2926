/**
 * prom-client, required on first use rather than imported: a process that serves no metrics (most
 * CLI commands, every test's CLI process) never loads its hundred-odd modules.
 */
import { createRequire } from 'node:module'

import type * as PromClient from 'prom-client'

let loaded: typeof PromClient | undefined

export function promClient(): typeof PromClient {
  loaded ??= createRequire(import.meta.url)('prom-client') as typeof PromClient
  return loaded
}
