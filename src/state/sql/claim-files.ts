import { type Kysely, sql } from 'kysely'

import type { FileLocator } from '../../model/files.ts'
import type { StateDatabase } from '../schema.ts'

/** A planned file as the files lane holds it: what to copy, and the fence its settlement presents. */
export interface ClaimedFileRow {
  readonly id: number
  readonly fence: number
  readonly locator: FileLocator
  readonly legacyUrl: string
  readonly name: string
  readonly expectedSize: number | undefined
  readonly expectedType: string | undefined
  /** Attempts before this one (in this run and the runs before it since the file was last reopened). */
  readonly attempts: number
}

/**
 * Claims up to `limit` planned files of the job for `owner` under a lease of `leaseSeconds`, oldest
 * first, skipping rows another process locks (`for update skip locked`) and files whose lease has
 * not run out (held by a live holder, or waiting out a retry's backoff). Each claim raises the
 * row's fence: a holder that lost its lease presents an older fence and settles nothing.
 */
export async function claimFiles(
  db: Kysely<StateDatabase>,
  args: { jobId: string; owner: string; leaseSeconds: number; limit: number },
): Promise<ClaimedFileRow[]> {
  const r = await sql<{
    id: string | number
    fence: string | number
    locator: FileLocator
    legacy_url: string
    name: string
    expected_size: string | number | null
    expected_type: string | null
    attempts: number
  }>`
    update chatferry.files f
    set lease_owner = ${args.owner}, lease_until = now() + ${args.leaseSeconds} * interval '1 second', fence = f.fence + 1, updated_at = now()
    from (
      select id from chatferry.files
      where job_id = ${args.jobId} and state = 'planned' and (lease_until is null or lease_until <= now())
      order by id
      limit ${args.limit}
      for update skip locked
    ) c
    where f.id = c.id
    returning f.id, f.fence, f.locator, f.legacy_url, f.name, f.expected_size, f.expected_type, f.attempts`.execute(db)
  return r.rows
    .map((row) => ({
      id: Number(row.id),
      fence: Number(row.fence),
      locator: row.locator,
      legacyUrl: row.legacy_url,
      name: row.name,
      expectedSize: row.expected_size === null ? undefined : Number(row.expected_size),
      expectedType: row.expected_type ?? undefined,
      attempts: row.attempts,
    }))
    .sort((a, b) => a.id - b.id)
}
