/**
 * Mattermost's entity table for the shared SQL session (`connectors/sql/session.ts`): each
 * entity's query (with the team's conditions under `team:`), its change column, the rows its keys
 * are listed from, its legacy id and its decoder; messages resolve the usernames their mentions
 * name and the channels they are in, members their join times, one lookup each per page
 * (`page-lookups.ts`). Delta mode compares `updateat` (members: `lastupdateat`) with
 * `since`. `readKeys` lists Users, Channels (not direct), their ChannelMembers and live Posts —
 * soft-deleted rows (`DeleteAt` set) included, since they come as changes; a row gone from the
 * table (a permanent delete, a member who left) has vanished.
 */
import type { EpochMs, LegacyEntity } from '../../../src/model/records.ts'
import { fileSourceHost } from '../../files/source-reader.ts'
import { printableId } from '../../sql/decode.ts'
import type { Params } from '../../sql/dialect.ts'
import type { SqlEntityTable, SqlRows } from '../../sql/session.ts'
import type { SnapshotConnection } from '../../sql/snapshot-connection.ts'
import type { MattermostConfig } from '../config.ts'
import { decodeGroup } from '../entities/groups.ts'
import { decodeMember } from '../entities/members.ts'
import { decodeMessage, mentionCandidates } from '../entities/messages.ts'
import { decodeUser } from '../entities/users.ts'
import { ChannelKinds, joinTimesOf } from './page-lookups.ts'
import { groupsQuery, keysQuery, membersQuery, messagesQuery, type MmEntityQuery, usernamesQuery, usersQuery } from './queries.ts'
import { teamScope } from './team-scope.ts'

/** Usernames looked up per statement when resolving mentions. */
const USERNAME_CHUNK = 500

type Row = Record<string, unknown>

/** The lowercase username → user id of each mention candidate of a page that names a user. */
async function usernamesOf(conn: SnapshotConnection, rows: readonly Row[]): Promise<Map<string, string>> {
  const names = mentionCandidates(rows)
  const found = new Map<string, string>()
  for (let i = 0; i < names.length; i += USERNAME_CHUNK) {
    const chunk = names.slice(i, i + USERNAME_CHUNK)
    const r = await conn.query(usernamesQuery(conn.dialect, chunk.length), chunk, 'resolving mentions')
    for (const u of r.rows) {
      if (typeof u.username === 'string' && u.id !== null) {
        found.set(u.username.toLowerCase(), String(u.id))
      }
    }
  }
  return found
}

const idOf = (row: Row): string => printableId(row.id)
const memberIdOf = (row: Row): string => `${printableId(row.channelid)}/${printableId(row.userid)}`

/** The entity table of a Mattermost database, scoped to `config.team` when set. */
export function mattermostTable(conn: SnapshotConnection, config: MattermostConfig): SqlEntityTable {
  const d = conn.dialect
  const lossy = conn.lossyText
  const scope = config.team === undefined ? undefined : teamScope(d, config.team).where
  const scoped = <Q extends SqlRows>(entity: LegacyEntity, q: Q): Q =>
    scope === undefined ? q : { ...q, where: [...(q.where ?? []), scope[entity]] }
  const entity = (e: LegacyEntity, q: MmEntityQuery) => ({
    query: scoped(e, q),
    changedSince: (params: Params, since: EpochMs) => `${q.changedAt} >= ${params.add(since)}`,
    keysQuery: scoped(e, keysQuery(d, e)),
  })
  const siteUrl = config.siteUrl?.replace(/\/+$/, '')
  const fileBaseUrl = config.fileBaseUrl.replace(/\/+$/, '')
  const fileHost = config.files === undefined ? undefined : fileSourceHost(config.files)
  const channelKinds = new ChannelKinds(conn)
  return {
    users: { ...entity('users', usersQuery(d)), legacyIdOf: idOf, decode: (row) => decodeUser(row, { lossy, siteUrl }) },
    groups: {
      ...entity('groups', groupsQuery(d)),
      legacyIdOf: idOf,
      decode: (row) => decodeGroup(row, { lossy, groupName: config.groupName, teamSuffix: config.team === undefined }),
    },
    members: {
      ...entity('members', membersQuery(d)),
      legacyIdOf: memberIdOf,
      decode: {
        perPage: async (rows) => {
          const joinTimes = await joinTimesOf(conn, rows)
          return (row) => decodeMember(row, lossy, joinTimes)
        },
      },
    },
    messages: {
      ...entity('messages', messagesQuery(d)),
      legacyIdOf: idOf,
      decode: {
        perPage: async (rows) => {
          const usernames = await usernamesOf(conn, rows)
          const channels = await channelKinds.forPage(rows)
          return (row) => decodeMessage(row, { lossy, fileBaseUrl, fileHost, usernames, channels })
        },
      },
    },
  }
}
