/**
 * The Nextcloud Talk connector: reads the Talk tables and the shared comments table of a Nextcloud
 * database (MariaDB/MySQL or Postgres, any table prefix) in one read-only snapshot, and turns them
 * into the canonical model. Entity order: users → groups (group and public conversations) →
 * members (their user attendees) → messages (chat comments). See README.md for every mapping.
 */
import type { GroupActivity, KeysOptions, Page, ReadOptions, SourceConnector, SourceSession } from '../../src/model/connector.ts'
import type { FileLocator } from '../../src/model/files.ts'
import type { EpochMs, LegacyEntity, LegacyRecordOf } from '../../src/model/records.ts'
import { FieldProblem, printableId } from '../sql/decode.ts'
import { buildCountQuery, type Params } from '../sql/dialect.ts'
import { readQueryKeys } from '../sql/key-pages.ts'
import { type PagedReadSpec, readPages } from '../sql/paged-read.ts'
import { openSnapshotConnection, type SnapshotConnection } from '../sql/snapshot-connection.ts'
import type { NextcloudTalkConfig } from './config.ts'
import { ncTime } from './entities/decode-helpers.ts'
import { decodeGroup } from './entities/groups.ts'
import { decodeMember } from './entities/members.ts'
import { decodeMessage, lookupsNeeded, type MessageLookups, type RawReaction } from './entities/messages.ts'
import { decodeUser } from './entities/users.ts'
import { nextcloudFilesReader, nextcloudLocator } from './files.ts'
import { entityQuery, fileLocationsQuery, firstMessageQuery, type NcEntityQuery, reactionsQuery, roomTypes, sharesQuery } from './sql/queries.ts'
import { type NcSchema, probeSchema } from './sql/tables.ts'

export { type NextcloudTalkConfig, type NextcloudTalkConfigInput, NextcloudTalkConfigSchema } from './config.ts'

/** Ids looked up per statement (mentioned uids, shares). */
const LOOKUP_CHUNK = 500

const legacyIdOf = (entity: LegacyEntity) => (row: Record<string, unknown>) =>
  entity === 'users' ? printableId(row.uid) : entity === 'members' ? `${printableId(row.room_id)}/${printableId(row.actor_id)}` : printableId(row.id)

class NextcloudTalkSession implements SourceSession {
  readonly snapshotAt: EpochMs
  readonly #conn: SnapshotConnection
  readonly #config: NextcloudTalkConfig
  readonly #schema: NcSchema
  readonly #queries: { readonly [E in LegacyEntity]: NcEntityQuery }

  constructor(conn: SnapshotConnection, schema: NcSchema, config: NextcloudTalkConfig) {
    this.snapshotAt = conn.snapshotAt
    this.#conn = conn
    this.#config = config
    this.#schema = schema
    const q = (e: LegacyEntity) => entityQuery(schema, e, config.rooms)
    this.#queries = { users: q('users'), groups: q('groups'), members: q('members'), messages: q('messages') }
  }

  /** The fixed conditions, plus the change-time condition in delta mode (entities without one are read whole). */
  #where(q: NcEntityQuery, since: EpochMs | undefined) {
    return (params: Params) => (since === undefined || q.changedSince === undefined ? [...q.where] : [...q.where, q.changedSince(params, since)])
  }

  async count(entity: LegacyEntity, options: { since?: EpochMs } = {}): Promise<number> {
    const q = this.#queries[entity]
    const sql = buildCountQuery(this.#conn.dialect, { from: q.from, where: this.#where(q, options.since) })
    const r = await this.#conn.query(sql.sql, sql.params, `counting ${entity}`)
    return Number(r.rows[0]?.n ?? 0)
  }

  /** Groups by `last_activity`, messages by creation time or a newer comment naming them; users and members have no change time. */
  async countChangedSince(entity: LegacyEntity, since: EpochMs): Promise<number | undefined> {
    return this.#queries[entity].changedSince === undefined ? undefined : this.count(entity, { since })
  }

  /** With `source.files`: each shared file's locator, from its `filecache` row and storage (files.ts). */
  async #locateShares(shares: Map<string, { fileId: string; name: string; source?: FileLocator }>): Promise<void> {
    const files = this.#config.files
    if (files === undefined) {
      return
    }
    const ids = [...new Set([...shares.values()].map((x) => x.fileId).filter((id) => /^\d{1,18}$/.test(id)))]
    const found = new Map<string, FileLocator>()
    for (let i = 0; i < ids.length; i += LOOKUP_CHUNK) {
      const chunk = ids.slice(i, i + LOOKUP_CHUNK)
      const r = await this.#conn.query(fileLocationsQuery(this.#schema, chunk.length), chunk.map(Number), 'locating shared files')
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

  async #lookups(rows: readonly Record<string, unknown>[]): Promise<MessageLookups> {
    const need = lookupsNeeded(rows)
    const users = new Set<string>()
    const shares = new Map<string, { fileId: string; name: string; source?: FileLocator }>()
    const s = this.#schema
    for (let i = 0; i < need.uids.length; i += LOOKUP_CHUNK) {
      const chunk = need.uids.slice(i, i + LOOKUP_CHUNK)
      const marks = chunk.map((_, j) => s.dialect.placeholder(j + 1)).join(', ')
      const r = await this.#conn.query(
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
      const r = await this.#conn.query(sharesQuery(s, chunk.length), chunk.map(Number), 'reading shared files')
      for (const h of r.rows) {
        shares.set(String(h.id), { fileId: String(h.file_id ?? ''), name: String(h.file_target ?? '') })
      }
    }
    await this.#locateShares(shares)
    const reactions = new Map<string, RawReaction[]>()
    const ids = rows.flatMap((r) => (typeof r.id === 'number' ? [r.id] : typeof r.id === 'string' && /^\d{1,15}$/.test(r.id) ? [Number(r.id)] : []))
    if (ids.length > 0) {
      const q = reactionsQuery(s, ids)
      for (const x of (await this.#conn.query(q.sql, q.params, 'reading reactions')).rows) {
        const key = String(x.parent_id)
        const list = reactions.get(key) ?? []
        list.push({ emoji: x.emoji, actorType: x.actor_type, actorId: x.actor_id, at: x.at })
        reactions.set(key, list)
      }
    }
    return { users, shares, reactions }
  }

  read<E extends LegacyEntity>(entity: E, options: ReadOptions = {}): AsyncIterable<Page<LegacyRecordOf[E]>> {
    const q = this.#queries[entity]
    const lossy = this.#conn.lossyText
    const siteUrl = this.#config.siteUrl?.replace(/\/+$/, '')
    const common = {
      conn: this.#conn,
      entity,
      keys: q.keys,
      pageSize: options.pageSize ?? this.#config.pageSize,
      after: options.after,
      signal: options.signal,
      query: { select: q.select, from: q.from, where: this.#where(q, options.since) },
      legacyIdOf: legacyIdOf(entity),
    }
    let spec: PagedReadSpec<LegacyRecordOf[LegacyEntity], MessageLookups | undefined>
    switch (entity) {
      case 'users':
        spec = { ...common, decode: (row) => decodeUser(row, { lossy, siteUrl, snapshotAt: this.snapshotAt }) }
        break
      case 'groups':
        spec = { ...common, decode: (row) => decodeGroup(row, { lossy, siteUrl }) }
        break
      case 'members':
        spec = { ...common, decode: (row) => decodeMember(row, lossy) }
        break
      default:
        spec = {
          ...common,
          enrich: (rows) => this.#lookups(rows),
          decode: (row, lookups) =>
            decodeMessage(row, { lossy, siteUrl, lookups: lookups ?? { users: new Set(), shares: new Map(), reactions: new Map() } }),
        }
    }
    return readPages(spec) as AsyncIterable<Page<LegacyRecordOf[E]>>
  }

  /**
   * The legacy ids of every row an entity reads (same tables and conditions, keys only). A user
   * deleted from Nextcloud, a deleted conversation, an attendee who left, and a comment removed by
   * message expiration or "clear history" vanish; a deleted message (`comment_deleted`) stays.
   */
  readKeys(entity: LegacyEntity, options: KeysOptions = {}): AsyncIterable<readonly string[]> {
    return readQueryKeys(this.#conn, entity, this.#queries[entity], options, legacyIdOf(entity))
  }

  /** Per group room, its earliest chat comment: Talk rooms carry no creation time. */
  async groupActivity(options: { readonly signal?: AbortSignal } = {}): Promise<ReadonlyMap<string, GroupActivity>> {
    options.signal?.throwIfAborted()
    const sql = firstMessageQuery(this.#schema, roomTypes(this.#config.rooms).groups)
    const r = await this.#conn.query(sql, [], 'finding the first message of each conversation')
    const found = new Map<string, GroupActivity>()
    for (const row of r.rows) {
      try {
        const t = ncTime('creation_timestamp', row.t)
        if (t !== undefined && row.gid !== null && row.gid !== undefined) {
          found.set(String(row.gid), { firstSentAt: t })
        }
      } catch (err) {
        if (!(err instanceof FieldProblem)) {
          throw err
        }
      }
    }
    return found
  }

  close(): Promise<void> {
    return this.#conn.close()
  }
}

/** The Nextcloud Talk connector for these settings. */
export function createNextcloudTalkConnector(config: NextcloudTalkConfig): SourceConnector {
  const files = config.files
  return {
    id: 'nextcloud-talk',
    async open() {
      const conn = await openSnapshotConnection(config.url, { connectTimeoutMs: config.connectTimeoutMs })
      try {
        return new NextcloudTalkSession(conn, await probeSchema(conn, config.tablePrefix), config)
      } catch (err) {
        await conn.close()
        throw err
      }
    },
    ...(files === undefined ? {} : { files: () => nextcloudFilesReader(files) }),
  }
}
