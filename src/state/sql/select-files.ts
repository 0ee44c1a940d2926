import { type Kysely, sql } from 'kysely'

import type { FileLocator } from '../../model/files.ts'
import type { StateDatabase } from '../schema.ts'

/** One file of a job as the reports show it (the URL map, `verify`, failures). */
export interface FileRow {
  readonly id: number
  readonly locator: FileLocator
  readonly legacyUrl: string
  readonly name: string
  readonly state: 'planned' | 'copied' | 'failed' | 'skipped'
  readonly bytes: number | null
  readonly sha256: string | null
  readonly sniffedType: string | null
  readonly storeKey: string | null
  readonly publicUrl: string | null
  readonly attempts: number
  readonly lastErrorCause: string | null
  readonly lastErrorReason: string | null
  /** How many message items link to it. */
  readonly messages: number
}

/** A job's files in id order, those in `states` only when given, at most `limit` after id `afterId`. */
export async function selectFiles(
  db: Kysely<StateDatabase>,
  jobId: string,
  filter: { states?: readonly string[]; afterId?: number; limit?: number } = {},
): Promise<FileRow[]> {
  const r = await sql<{
    id: string | number
    locator: FileLocator
    legacy_url: string
    name: string
    state: FileRow['state']
    bytes: string | number | null
    sha256: string | null
    sniffed_type: string | null
    store_key: string | null
    public_url: string | null
    attempts: number
    last_error_cause: string | null
    last_error_reason: string | null
    messages: string | number
  }>`
    select f.id, f.locator, f.legacy_url, f.name, f.state, f.bytes, f.sha256, f.sniffed_type, f.store_key, f.public_url,
      f.attempts, f.last_error_cause, f.last_error_reason,
      (select count(*) from chatferry.file_links l where l.file_id = f.id) as messages
    from chatferry.files f
    where f.job_id = ${jobId} and f.id > ${filter.afterId ?? 0}
      and (${filter.states === undefined} or f.state = any(${filter.states ?? []}::text[]))
    order by f.id
    limit ${filter.limit ?? 1_000_000}`.execute(db)
  return r.rows.map((row) => ({
    id: Number(row.id),
    locator: row.locator,
    legacyUrl: row.legacy_url,
    name: row.name,
    state: row.state,
    bytes: row.bytes === null ? null : Number(row.bytes),
    sha256: row.sha256,
    sniffedType: row.sniffed_type,
    storeKey: row.store_key,
    publicUrl: row.public_url,
    attempts: row.attempts,
    lastErrorCause: row.last_error_cause,
    lastErrorReason: row.last_error_reason,
    messages: Number(row.messages),
  }))
}
