/**
 * The Mattermost connector: reads a Mattermost database directly, on Postgres (lowercase schema)
 * or MySQL/MariaDB (CamelCase schema), in one read-only snapshot, and turns it into the canonical
 * model. Entity order: users → groups (channels) → members → messages. See README.md for how each
 * Mattermost quirk is mapped.
 */
import { ChatferryError } from '../../src/errors.ts'
import type { GroupActivity, KeysOptions, Page, ReadOptions, SourceConnector, SourceSession } from '../../src/model/connector.ts'
import type { EpochMs, LegacyEntity, LegacyRecordOf } from '../../src/model/records.ts'
import { fileSourceHost, fileSourceReader } from '../files/source-reader.ts'
import { FieldProblem, printableId } from '../sql/decode.ts'
import { buildCountQuery } from '../sql/dialect.ts'
import { readQueryKeys } from '../sql/key-pages.ts'
import { type PagedReadSpec, readPages } from '../sql/paged-read.ts'
import { openSnapshotConnection, type SnapshotConnection } from '../sql/snapshot-connection.ts'
import { describeSource } from '../sql/source-url.ts'
import type { MattermostConfig } from './config.ts'
import { mmTime } from './entities/decode-helpers.ts'
import { decodeGroup } from './entities/groups.ts'
import { decodeMember } from './entities/members.ts'
import { decodeMessage, mentionCandidates } from './entities/messages.ts'
import { decodeUser } from './entities/users.ts'
import {
  groupActivityQueries,
  groupsQuery,
  keysQuery,
  membersQuery,
  messagesQuery,
  type MmEntityQuery,
  usernamesQuery,
  usersQuery,
} from './sql/queries.ts'
import { teamScope } from './sql/team-scope.ts'

export { type MattermostConfig, type MattermostConfigInput, MattermostConfigSchema } from './config.ts'

/** Usernames looked up per statement when resolving mentions. */
const USERNAME_CHUNK = 500

/** Each entity's query with its team condition added. */
function withScope(
  queries: { readonly [E in LegacyEntity]: MmEntityQuery },
  scope: { readonly [E in LegacyEntity]: string },
): { readonly [E in LegacyEntity]: MmEntityQuery } {
  const scoped = (e: LegacyEntity): MmEntityQuery => ({ ...queries[e], where: [...queries[e].where, scope[e]] })
  return { users: scoped('users'), groups: scoped('groups'), members: scoped('members'), messages: scoped('messages') }
}

class MattermostSession implements SourceSession {
  readonly snapshotAt: EpochMs
  readonly #conn: SnapshotConnection
  readonly #config: MattermostConfig
  readonly #queries: { readonly [E in LegacyEntity]: MmEntityQuery }
  /** One team's conditions per entity (`team:`), or undefined: the whole database. */
  readonly #scope: { readonly [E in LegacyEntity]: string } | undefined

  constructor(conn: SnapshotConnection, config: MattermostConfig) {
    this.snapshotAt = conn.snapshotAt
    this.#conn = conn
    this.#config = config
    const d = conn.dialect
    const queries = { users: usersQuery(d), groups: groupsQuery(d), members: membersQuery(d), messages: messagesQuery(d) }
    const scope = config.team === undefined ? undefined : teamScope(d, config.team).where
    this.#queries = scope === undefined ? queries : withScope(queries, scope)
    this.#scope = scope
  }

  #where(q: MmEntityQuery, since: EpochMs | undefined) {
    return (params: { add(v: unknown): string }) => (since === undefined ? [...q.where] : [...q.where, `${q.changedAt} >= ${params.add(since)}`])
  }

  async count(entity: LegacyEntity, options: { since?: EpochMs } = {}): Promise<number> {
    const q = this.#queries[entity]
    const sql = buildCountQuery(this.#conn.dialect, { from: q.from, where: this.#where(q, options.since) })
    const r = await this.#conn.query(sql.sql, sql.params, `counting ${entity}`)
    return Number(r.rows[0]?.n ?? 0)
  }

  /** Rows whose change column (`updateat`, members' `lastupdateat`) is at or after `since`. */
  countChangedSince(entity: LegacyEntity, since: EpochMs): Promise<number> {
    return this.count(entity, { since })
  }

  async #usernames(rows: readonly Record<string, unknown>[]): Promise<Map<string, string>> {
    const names = mentionCandidates(rows)
    const found = new Map<string, string>()
    for (let i = 0; i < names.length; i += USERNAME_CHUNK) {
      const chunk = names.slice(i, i + USERNAME_CHUNK)
      const r = await this.#conn.query(usernamesQuery(this.#conn.dialect, chunk.length), chunk, 'resolving mentions')
      for (const u of r.rows) {
        if (typeof u.username === 'string' && u.id !== null) {
          found.set(u.username.toLowerCase(), String(u.id))
        }
      }
    }
    return found
  }

  read<E extends LegacyEntity>(entity: E, options: ReadOptions = {}): AsyncIterable<Page<LegacyRecordOf[E]>> {
    const q = this.#queries[entity]
    const lossy = this.#conn.lossyText
    const where = this.#where(q, options.since)
    const common = {
      conn: this.#conn,
      entity,
      keys: q.keys,
      pageSize: options.pageSize ?? this.#config.pageSize,
      after: options.after,
      signal: options.signal,
      query: { select: q.select, from: q.from, where },
    }
    const cfg = this.#config
    let spec: PagedReadSpec<LegacyRecordOf[LegacyEntity], Map<string, string> | undefined>
    switch (entity) {
      case 'users':
        spec = {
          ...common,
          decode: (row) => decodeUser(row, { lossy, siteUrl: cfg.siteUrl?.replace(/\/+$/, '') }),
          legacyIdOf: (row) => printableId(row.id),
        }
        break
      case 'groups':
        spec = {
          ...common,
          decode: (row) => decodeGroup(row, { lossy, groupName: cfg.groupName, teamSuffix: cfg.team === undefined }),
          legacyIdOf: (row) => printableId(row.id),
        }
        break
      case 'members':
        spec = {
          ...common,
          decode: (row) => decodeMember(row, lossy),
          legacyIdOf: (row) => `${printableId(row.channelid)}/${printableId(row.userid)}`,
        }
        break
      default: {
        const fileBaseUrl = cfg.fileBaseUrl.replace(/\/+$/, '')
        const fileHost = cfg.files === undefined ? undefined : fileSourceHost(cfg.files)
        spec = {
          ...common,
          enrich: (rows) => this.#usernames(rows),
          decode: (row, usernames) => decodeMessage(row, { lossy, fileBaseUrl, fileHost, usernames: usernames ?? new Map() }),
          legacyIdOf: (row) => printableId(row.id),
        }
      }
    }
    return readPages(spec) as AsyncIterable<Page<LegacyRecordOf[E]>>
  }

  /**
   * The legacy ids of every row of an entity (`keysQuery`): Users, Channels (not direct), their
   * ChannelMembers, and live Posts — soft-deleted rows (`DeleteAt` set) included, since they come
   * as changes; a row gone from the table (a permanent delete, a member who left) has vanished.
   */
  readKeys(entity: LegacyEntity, options: KeysOptions = {}): AsyncIterable<readonly string[]> {
    const unscoped = keysQuery(this.#conn.dialect, entity)
    const q = this.#scope === undefined ? unscoped : { ...unscoped, where: [...unscoped.where, this.#scope[entity]] }
    return readQueryKeys(this.#conn, entity, q, options, (row) =>
      entity === 'members' ? `${printableId(row.channelid)}/${printableId(row.userid)}` : printableId(row.id),
    )
  }

  /**
   * Per channel: the earliest join in its membership history and its earliest post (two grouped
   * queries), for a channel whose `createat` is 0. Both are lower bounds of what is imported.
   */
  async groupActivity(options: { readonly signal?: AbortSignal } = {}): Promise<ReadonlyMap<string, GroupActivity>> {
    const found = new Map<string, { firstJoinedAt?: number; firstSentAt?: number }>()
    const q = groupActivityQueries(this.#conn.dialect)
    for (const [sql, field] of [
      [q.joins, 'firstJoinedAt'],
      [q.posts, 'firstSentAt'],
    ] as const) {
      options.signal?.throwIfAborted()
      const r = await this.#conn.query(sql, [], `finding the earliest ${field === 'firstJoinedAt' ? 'join' : 'post'} of each channel`)
      for (const row of r.rows) {
        let t: number | undefined
        try {
          t = mmTime(field, row.t)
        } catch (err) {
          if (!(err instanceof FieldProblem)) {
            throw err
          }
        }
        if (t !== undefined && row.gid !== null && row.gid !== undefined) {
          const e = found.get(String(row.gid)) ?? {}
          e[field] = t
          found.set(String(row.gid), e)
        }
      }
    }
    return found
  }

  close(): Promise<void> {
    return this.#conn.close()
  }
}

/** A `team:` the database does not have would read nothing: refused (SOURCE_INVALID, exit 2), the connection closed. */
async function refuseUnknownTeam(conn: SnapshotConnection, team: string, url: string): Promise<void> {
  const r = await conn.query(teamScope(conn.dialect, team).teamCount, [], 'looking up the team')
  if (Number(r.rows[0]?.n ?? 0) === 0) {
    await conn.close()
    throw new ChatferryError('SOURCE_INVALID', `source.team: the Mattermost database (${describeSource(url)}) has no team named ${team}`)
  }
}

/** The Mattermost connector for these settings. */
export function createMattermostConnector(config: MattermostConfig): SourceConnector {
  const files = config.files
  return {
    id: 'mattermost',
    async open() {
      const conn = await openSnapshotConnection(config.url, { connectTimeoutMs: config.connectTimeoutMs })
      if (config.team !== undefined) {
        await refuseUnknownTeam(conn, config.team, config.url)
      }
      return new MattermostSession(conn, config)
    },
    ...(files === undefined
      ? {}
      : {
          files: () =>
            fileSourceReader(files, 'source.files', "Mattermost's data directory (FileSettings.Directory), where FileInfo.Path is relative to"),
        }),
  }
}
