import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/** A file of a message item as packing needs it: how the item's attachment is sent. */
export interface LinkedFileRow {
  readonly targetKey: string
  readonly ord: number
  readonly state: 'planned' | 'copied' | 'failed' | 'skipped'
  readonly onFailure: string | null
  readonly legacyUrl: string
  readonly name: string
  readonly publicUrl: string | null
  readonly bytes: number | null
  readonly sniffedType: string | null
}

/** The files of these message items (target keys), in the order of their attachments. */
export async function selectLinkedFiles(db: Kysely<StateDatabase>, jobId: string, targetKeys: readonly string[]): Promise<LinkedFileRow[]> {
  if (targetKeys.length === 0) {
    return []
  }
  const r = await sql<{
    target_key: string
    ord: number
    state: LinkedFileRow['state']
    on_failure: string | null
    legacy_url: string
    name: string
    public_url: string | null
    bytes: string | number | null
    sniffed_type: string | null
  }>`
    select l.target_key, l.ord, f.state, f.on_failure, f.legacy_url, f.name, f.public_url, f.bytes, f.sniffed_type
    from chatferry.file_links l join chatferry.files f on f.id = l.file_id
    where l.job_id = ${jobId} and l.target_key = any(${targetKeys}::text[])
    order by l.target_key, l.ord`.execute(db)
  return r.rows.map((row) => ({
    targetKey: row.target_key,
    ord: row.ord,
    state: row.state,
    onFailure: row.on_failure,
    legacyUrl: row.legacy_url,
    name: row.name,
    publicUrl: row.public_url,
    bytes: row.bytes === null ? null : Number(row.bytes),
    sniffedType: row.sniffed_type,
  }))
}
