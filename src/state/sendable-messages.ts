/**
 * What the claimed items of a batch are sent as (issue 27): a message's attachments rewritten
 * from its files (`attachFiles`), and with `files.rewriteTextLinks` the legacy URLs its text
 * names of files copied in this job replaced by the store's public URLs (its own files, and any
 * copied file of the job: one lookup for all the claimed texts). Other entities go as planned.
 */
import type { Kysely } from 'kysely'

import type { Entity } from '../target/schemas.ts'
import { attachFiles, ownFileLinks, payloadLinkCandidates, rewriteTextLinks } from './file-payload.ts'
import type { StateDatabase } from './schema.ts'
import { selectCopiedFileLinks } from './sql/select-copied-file-links.ts'
import { type LinkedFileRow, selectLinkedFiles } from './sql/select-linked-files.ts'

/** What the text-link rewrite did to a batch's messages. */
export interface TextLinkCounts {
  /** Links rewritten to the store's public URL. */
  rewritten: number
  /** Messages whose rewritten text would have gone over the platform's limits (sent unchanged). */
  overLimit: number
}

interface ClaimedItem {
  readonly id: number
  readonly batchId: number
  readonly key: string
  readonly payload: string
}

/** The files of the claimed message items, by target key (none for other entities or without `rehost`). */
async function filesOfMessages(db: Kysely<StateDatabase>, jobId: string, keys: readonly string[]): Promise<Map<string, LinkedFileRow[]>> {
  const byKey = new Map<string, LinkedFileRow[]>()
  for (const f of await selectLinkedFiles(db, jobId, keys)) {
    const list = byKey.get(f.targetKey) ?? []
    list.push(f)
    byKey.set(f.targetKey, list)
  }
  return byKey
}

/** The payload each claimed item is sent with (by item id), and what the text-link rewrite did (by batch id). */
export async function sendablePayloads(
  db: Kysely<StateDatabase>,
  args: { jobId: string; rewriteTextLinks: boolean },
  batches: readonly { id: number; entity: Entity }[],
  items: readonly ClaimedItem[],
): Promise<{ payloads: Map<number, string>; textLinks: Map<number, TextLinkCounts> }> {
  const messageBatches = new Set(batches.filter((b) => b.entity === 'messages').map((b) => b.id))
  const messages = items.filter((i) => messageBatches.has(i.batchId))
  const files = await filesOfMessages(
    db,
    args.jobId,
    messages.map((i) => i.key),
  )
  const payloads = new Map(items.map((i) => [i.id, i.payload]))
  const textLinks = new Map<number, TextLinkCounts>()
  const jobLinks = args.rewriteTextLinks
    ? await selectCopiedFileLinks(db, args.jobId, [...new Set(messages.flatMap((i) => payloadLinkCandidates(i.payload)))])
    : new Map<string, string>()
  for (const i of messages) {
    const mine = files.get(i.key) ?? []
    let payload = attachFiles(i.payload, mine).payload
    if (args.rewriteTextLinks) {
      const out = rewriteTextLinks(payload, new Map([...jobLinks, ...ownFileLinks(mine)]))
      payload = out.payload
      const counts = textLinks.get(i.batchId) ?? { rewritten: 0, overLimit: 0 }
      counts.rewritten += out.rewritten
      counts.overLimit += out.overLimit
      textLinks.set(i.batchId, counts)
    }
    payloads.set(i.id, payload)
  }
  return { payloads, textLinks }
}
