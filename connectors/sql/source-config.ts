/**
 * Settings every SQL connector shares, as zod pieces the connectors' config schemas reuse.
 */
import { z } from 'zod'

import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from './paged-read.ts'
import { urlReadOnlyProblems } from './read-only.ts'
import { engineOf, SOURCE_URL_FORMS } from './source-url.ts'

/**
 * `source.url`: the database to read; the scheme picks the engine. Use `${VAR}` for passwords.
 * A MySQL/MariaDB URL must not ask for several statements per query (`read-only.ts`).
 */
export const sourceUrl = z
  .string()
  .min(1, 'must not be empty')
  .refine((url) => engineOf(url) !== undefined, { message: `must be ${SOURCE_URL_FORMS}` })
  .superRefine((url, ctx) => {
    for (const message of urlReadOnlyProblems(url)) {
      ctx.addIssue({ code: 'custom', message })
    }
  })

/** `source.pageSize`: rows per page (and per query). @default 1000 */
export const pageSize = z.number().int().min(1).max(MAX_PAGE_SIZE).default(DEFAULT_PAGE_SIZE)

/** `source.connectTimeoutMs`: how long to wait for the database. @default 10000 */
export const connectTimeoutMs = z.number().int().positive().max(600_000).default(10_000)
