import { type RawBuilder, sql } from 'kysely'

/**
 * A SQL fragment (for `exists (…)`) true when the item aliased `i` is a message that waits for a
 * file: one not settled yet, or failed under `files.onFailure: wait`; only the latter with
 * `'failed'`. Messages without files (every mode but `rehost`) have no links and never wait.
 */
export function heldByFiles(which: 'open' | 'failed' = 'open'): RawBuilder<unknown> {
  const state =
    which === 'open'
      ? sql`(f.state = 'planned' or (f.state = 'failed' and f.on_failure = 'wait'))`
      : sql`(f.state = 'failed' and f.on_failure = 'wait')`
  return sql`
    select 1 from chatferry.file_links l join chatferry.files f on f.id = l.file_id
    where i.entity = 'messages' and l.job_id = i.job_id and l.target_key = i.target_key and ${state}`
}
