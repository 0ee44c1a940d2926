import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/**
 * The copied files of a job among these legacy URLs, as legacy URL → public URL
 * (`files.rewriteTextLinks`: the URLs a batch's texts name, one query per batch; the hash index
 * `files_legacy_url_idx` finds them without reading the job's other files).
 */
export async function selectCopiedFileLinks(db: Kysely<StateDatabase>, jobId: string, legacyUrls: readonly string[]): Promise<Map<string, string>> {
  if (legacyUrls.length === 0) {
    return new Map()
  }
  const r = await sql<{ legacy_url: string; public_url: string }>`
    select legacy_url, public_url from chatferry.files
    where legacy_url = any(${legacyUrls}::text[]) and job_id = ${jobId} and state = 'copied' and public_url is not null
    order by id`.execute(db)
  return new Map(r.rows.map((row) => [row.legacy_url, row.public_url]))
}
