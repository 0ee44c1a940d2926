/**
 * Nextcloud Talk's entity table for the shared SQL session (`connectors/sql/session.ts`): each
 * entity's query (`queries.ts`, over the probed schema and the rooms `source.rooms` reads), its
 * change condition (groups by `last_activity`, messages by creation time or a newer comment naming
 * them; users and members have none, so a delta reads them whole), its legacy id and its decoder;
 * messages look up mentions, shares and reactions per page (`lookups.ts`). `readKeys` lists the
 * same rows, keys only: a user deleted from Nextcloud, a deleted conversation, an attendee who
 * left, and a comment removed by message expiration or "clear history" vanish; a deleted message
 * (`comment_deleted`) stays.
 */
import type { LegacyEntity } from '../../../src/model/records.ts'
import { printableId } from '../../sql/decode.ts'
import type { SqlEntityTable } from '../../sql/session.ts'
import type { SnapshotConnection } from '../../sql/snapshot-connection.ts'
import type { NextcloudTalkConfig } from '../config.ts'
import { decodeGroup } from '../entities/groups.ts'
import { decodeMember } from '../entities/members.ts'
import { decodeMessage } from '../entities/messages.ts'
import { decodeUser } from '../entities/users.ts'
import { messageLookups } from './lookups.ts'
import { entityQuery } from './queries.ts'
import type { NcSchema } from './tables.ts'

type Row = Record<string, unknown>

/** The entity table of a Nextcloud database's Talk tables. */
export function nextcloudTalkTable(conn: SnapshotConnection, schema: NcSchema, config: NextcloudTalkConfig): SqlEntityTable {
  const lossy = conn.lossyText
  const siteUrl = config.siteUrl?.replace(/\/+$/, '')
  const entity = (e: LegacyEntity) => {
    const q = entityQuery(schema, e, config.rooms)
    return { query: q, ...(q.changedSince === undefined ? {} : { changedSince: q.changedSince }) }
  }
  const idOf = (row: Row): string => printableId(row.id)
  return {
    users: {
      ...entity('users'),
      legacyIdOf: (row) => printableId(row.uid),
      decode: (row) => decodeUser(row, { lossy, siteUrl, snapshotAt: conn.snapshotAt }),
    },
    groups: { ...entity('groups'), legacyIdOf: idOf, decode: (row) => decodeGroup(row, { lossy, siteUrl }) },
    members: {
      ...entity('members'),
      legacyIdOf: (row) => `${printableId(row.room_id)}/${printableId(row.actor_id)}`,
      decode: (row) => decodeMember(row, lossy),
    },
    messages: {
      ...entity('messages'),
      legacyIdOf: idOf,
      decode: {
        perPage: async (rows) => {
          const lookups = await messageLookups(conn, schema, config.files, rows)
          return (row) => decodeMessage(row, { lossy, siteUrl, lookups })
        },
      },
    },
  }
}
