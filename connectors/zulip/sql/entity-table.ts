/**
 * Zulip's entity table for the shared SQL session (`connectors/sql/session.ts`): each entity's
 * query over one realm (its conditions are in its FROM), its change time (compared as a
 * timestamptz), its legacy id and its decoder; messages resolve the `@**Name**` mentions without
 * an id, one lookup per page. Counts and delta reads (users, streams and subscriptions by their
 * latest audit-log event, else their creation; direct-message groups by their first message;
 * messages by the latest of sent, edited and archived) use the same FROM. `readKeys` lists every
 * row the entity reads: a deactivated user or archived stream is still listed; an unsubscribed
 * member (`active = false`) or a message moved to the archive (deleted) is gone, as is anything
 * Zulip deleted for good.
 */
import type { EpochMs, LegacyEntity } from '../../../src/model/records.ts'
import { fileSourceHost } from '../../files/source-reader.ts'
import { printableId } from '../../sql/decode.ts'
import type { Params } from '../../sql/dialect.ts'
import type { SqlEntityTable } from '../../sql/session.ts'
import type { SnapshotConnection } from '../../sql/snapshot-connection.ts'
import type { ZulipConfig } from '../config.ts'
import { decodeGroup, groupIdOf } from '../entities/groups.ts'
import { decodeMember, memberIdOf } from '../entities/members.ts'
import { mentionedNames } from '../entities/mentions.ts'
import { decodeMessage } from '../entities/messages.ts'
import { decodeUser } from '../entities/users.ts'
import { entityQuery, namesQuery, type RealmIds } from './queries.ts'

/** Names looked up per statement when resolving `@**Name**` mentions. */
const NAME_CHUNK = 500

type Row = Record<string, unknown>

/** The user ids of each full name a page's messages mention, in the realm. */
async function namesOf(conn: SnapshotConnection, realm: RealmIds, rows: readonly Row[]): Promise<Map<string, string[]>> {
  const names = mentionedNames(rows)
  const found = new Map<string, string[]>()
  for (let i = 0; i < names.length; i += NAME_CHUNK) {
    const chunk = names.slice(i, i + NAME_CHUNK)
    const r = await conn.query(namesQuery(realm, chunk.length), chunk, 'resolving mentions')
    for (const u of r.rows) {
      const name = String(u.name)
      found.set(name, [...(found.get(name) ?? []), String(u.id)])
    }
  }
  return found
}

/** The entity table of one realm of a Zulip database. */
export function zulipTable(conn: SnapshotConnection, config: ZulipConfig, realm: RealmIds): SqlEntityTable {
  const lossy = conn.lossyText
  const entity = (e: LegacyEntity) => {
    const q = entityQuery(e, realm, config)
    return {
      query: q,
      changedSince: (params: Params, since: EpochMs) => `${q.changedAt} >= to_timestamp(${params.add(since)}::float8 / 1000)`,
    }
  }
  const idOf = (row: Row): string => printableId(row.id)
  const siteUrl = config.siteUrl?.replace(/\/+$/, '')
  const fileBaseUrl = config.fileBaseUrl.replace(/\/+$/, '')
  const fileHost = config.files === undefined ? undefined : fileSourceHost(config.files)
  return {
    users: { ...entity('users'), legacyIdOf: idOf, decode: (row) => decodeUser(row, { lossy, siteUrl }) },
    groups: {
      ...entity('groups'),
      legacyIdOf: (row) => groupIdOf(row.kind, printableId(row.gid), row.topic_key),
      decode: (row) => decodeGroup(row, lossy),
    },
    members: { ...entity('members'), legacyIdOf: memberIdOf, decode: (row) => decodeMember(row) },
    messages: {
      ...entity('messages'),
      legacyIdOf: idOf,
      decode: {
        perPage: async (rows) => {
          const names = await namesOf(conn, realm, rows)
          return (row) => decodeMessage(row, { lossy, topics: config.topics, fileBaseUrl, fileHost, names })
        },
      },
    },
  }
}
