import { createRequire } from 'node:module'

/** chatferry's version, from package.json; named in every report. */
export const VERSION: string = (createRequire(import.meta.url)('../package.json') as { version: string }).version
