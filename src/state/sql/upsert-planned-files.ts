import { type Kysely, sql } from 'kysely'

import { fileKeyOf } from '../file-key.ts'
import type { PlannedItem } from '../plan-items.ts'
import { storableKey, storableText } from '../safe-text.ts'
import type { StateDatabase } from '../schema.ts'

/**
 * Records the files of a page's message items (`files.mode: rehost`): one `chatferry.files` row
 * per distinct file of the job (a file shared by many messages is copied once; a known one is left
 * as it is), and each item's links to its files in the order of its attachments (replacing the
 * item's previous links, so a re-planned message points at its current files). Runs in the page's
 * transaction, so a message is never in the ledger without the files it waits for.
 */
export async function upsertPlannedFiles(db: Kysely<StateDatabase>, jobId: string, items: readonly PlannedItem[]): Promise<number> {
  const files = new Map<string, { locator: string; url: string; name: string; size: number | null; type: string | null }>()
  const links: { key: string; ord: number; file: string }[] = []
  const linked = new Set<string>()
  for (const item of items) {
    if (item.files === undefined) {
      continue
    }
    const targetKey = storableKey(item.targetKey)
    linked.add(targetKey)
    item.files.forEach((f, ord) => {
      const key = fileKeyOf(f.locator)
      if (!files.has(key)) {
        files.set(key, {
          locator: JSON.stringify({ reader: f.locator.reader, ref: f.locator.ref, host: f.locator.host }),
          url: storableText(f.url),
          name: storableText(f.name),
          size: f.size ?? null,
          type: f.type ?? null,
        })
      }
      links.push({ key: targetKey, ord, file: key })
    })
  }
  if (linked.size === 0) {
    return 0
  }
  const keys = [...files.keys()]
  const rows = [...files.values()]
  const inserted = await sql<{ n: number }>`
    with i as (
      insert into chatferry.files (job_id, file_key, locator, legacy_url, name, expected_size, expected_type)
      select ${jobId}, v.k, v.l::jsonb, v.u, v.n, v.s, v.t
      from unnest(${keys}::text[], ${rows.map((r) => r.locator)}::text[], ${rows.map((r) => r.url)}::text[],
        ${rows.map((r) => r.name)}::text[], ${rows.map((r) => r.size)}::bigint[], ${rows.map((r) => r.type)}::text[]) as v(k, l, u, n, s, t)
      on conflict (job_id, file_key) do nothing
      returning 1)
    select count(*)::int as n from i`.execute(db)
  await sql`delete from chatferry.file_links where job_id = ${jobId} and target_key = any(${[...linked]}::text[])`.execute(db)
  if (links.length > 0) {
    await sql`
      insert into chatferry.file_links (job_id, target_key, ord, file_id)
      select ${jobId}, v.tk, v.ord, f.id
      from unnest(${links.map((l) => l.key)}::text[], ${links.map((l) => l.ord)}::int[], ${links.map((l) => l.file)}::text[]) as v(tk, ord, fk)
      join chatferry.files f on f.job_id = ${jobId} and f.file_key = v.fk`.execute(db)
  }
  return Number(inserted.rows[0]?.n ?? 0)
}
