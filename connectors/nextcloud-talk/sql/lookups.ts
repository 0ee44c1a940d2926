/**
 * What a page of Nextcloud Talk chat comments needs besides its rows, looked up in the same
 * snapshot before the next page is requested: the mentioned uids that are users, the shared files
 * (with `source.files`, each one's locator from its `filecache` row and storage: files.ts) and
 * the reactions to each comment.
 */
import type { FileLocator } from '../../../src/model/files.ts'
import type { SnapshotConnection } from '../../sql/snapshot-connection.ts'
import type { NextcloudTalkConfig } from '../config.ts'
import { lookupsNeeded, type MessageLookups, type RawReaction } from '../entities/messages.ts'
import { nextcloudLocator } from '../files.ts'
import { fileLocationsQuery, reactionsQuery, sharesQuery } from './queries.ts'
import type { NcSchema } from './tables.ts'

/** Ids looked up per statement (mentioned uids, shares). */
const LOOKUP_CHUNK = 500

type Share = { fileId: string; name: string; source?: FileLocator }

/** With `source.files`: each shared file's locator, from its `filecache` row and storage (files.ts). */
async function locateShares(
  conn: SnapshotConnection,
  schema: NcSchema,
  files: NextcloudTalkConfig['files'],
  shares: Map<string, Share>,
): Promise<void> {
  if (files === undefined) {
    return
  }
  const ids = [...new Set([...shares.values()].map((x) => x.fileId).filter((id) => /^\d{1,18}$/.test(id)))]
  const found = new Map<string, FileLocator>()
  for (let i = 0; i < ids.length; i += LOOKUP_CHUNK) {
    const chunk = ids.slice(i, i + LOOKUP_CHUNK)
    const r = await conn.query(fileLocationsQuery(schema, chunk.length), chunk.map(Number), 'locating shared files')
    for (const f of r.rows) {
      const source = nextcloudLocator(files, String(f.file_id), String(f.storage ?? ''), String(f.path ?? ''))
      if (source !== undefined) {
        found.set(String(f.file_id), source)
      }
    }
  }
  for (const share of shares.values()) {
    const source = found.get(share.fileId)
    if (source !== undefined) {
      share.source = source
    }
  }
}

/** The lookups of one page of comments. */
export async function messageLookups(
  conn: SnapshotConnection,
  s: NcSchema,
  files: NextcloudTalkConfig['files'],
  rows: readonly Record<string, unknown>[],
): Promise<MessageLookups> {
  const need = lookupsNeeded(rows)
  const users = new Set<string>()
  const shares = new Map<string, Share>()
  for (let i = 0; i < need.uids.length; i += LOOKUP_CHUNK) {
    const chunk = need.uids.slice(i, i + LOOKUP_CHUNK)
    const marks = chunk.map((_, j) => s.dialect.placeholder(j + 1)).join(', ')
    const r = await conn.query(
      `SELECT ${s.col('u', 'uid')} AS uid FROM ${s.table('users')} u WHERE ${s.col('u', 'uid')} IN (${marks})`,
      chunk,
      'resolving mentions',
    )
    for (const u of r.rows) {
      users.add(String(u.uid))
    }
  }
  const shareIds = need.shares.filter((id) => /^\d{1,18}$/.test(id))
  for (let i = 0; i < shareIds.length; i += LOOKUP_CHUNK) {
    const chunk = shareIds.slice(i, i + LOOKUP_CHUNK)
    const r = await conn.query(sharesQuery(s, chunk.length), chunk.map(Number), 'reading shared files')
    for (const h of r.rows) {
      shares.set(String(h.id), { fileId: String(h.file_id ?? ''), name: String(h.file_target ?? '') })
    }
  }
  await locateShares(conn, s, files, shares)
  const reactions = new Map<string, RawReaction[]>()
  const ids = rows.flatMap((r) => (typeof r.id === 'number' ? [r.id] : typeof r.id === 'string' && /^\d{1,15}$/.test(r.id) ? [Number(r.id)] : []))
  if (ids.length > 0) {
    const q = reactionsQuery(s, ids)
    for (const x of (await conn.query(q.sql, q.params, 'reading reactions')).rows) {
      const key = String(x.parent_id)
      const list = reactions.get(key) ?? []
      list.push({ emoji: x.emoji, actorType: x.actor_type, actorId: x.actor_id, at: x.at })
      reactions.set(key, list)
    }
  }
  return { users, shares, reactions }
}
