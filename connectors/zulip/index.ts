/**
 * The Zulip connector: reads one realm (organisation) of a Zulip Postgres database directly, in one
 * read-only snapshot, and turns it into the canonical model. Entity order: users → groups (streams
 * or stream topics, and direct-message groups) → members (subscriptions) → messages. See README.md.
 */
import { ChatferryError } from '../../src/errors.ts'
import type { KeysOptions, Page, ReadOptions, SourceConnector, SourceSession } from '../../src/model/connector.ts'
import type { EpochMs, LegacyEntity, LegacyRecordOf } from '../../src/model/records.ts'
import { fileSourceHost } from '../files/source-reader.ts'
import { printableId } from '../sql/decode.ts'
import { buildCountQuery, type Params } from '../sql/dialect.ts'
import { readQueryKeys } from '../sql/key-pages.ts'
import { type PagedReadSpec, readPages } from '../sql/paged-read.ts'
import { openSnapshotConnection, type SnapshotConnection } from '../sql/snapshot-connection.ts'
import type { ZulipConfig } from './config.ts'
import { decodeGroup, groupIdOf } from './entities/groups.ts'
import { decodeMember, memberIdOf } from './entities/members.ts'
import { mentionedNames } from './entities/mentions.ts'
import { decodeMessage } from './entities/messages.ts'
import { decodeUser } from './entities/users.ts'
import { zulipFilesReader } from './files.ts'
import { entityQuery, namesQuery, REALM_QUERY, type RealmIds, type ZulipEntityQuery } from './sql/queries.ts'

export { type ZulipConfig, type ZulipConfigInput, ZulipConfigSchema } from './config.ts'

/** Names looked up per statement when resolving `@**Name**` mentions. */
const NAME_CHUNK = 500

type Row = Record<string, unknown>

/** The legacy id of a raw row of an entity's query. */
function legacyIdOfRow(entity: LegacyEntity, row: Row): string {
  switch (entity) {
    case 'groups':
      return groupIdOf(row.kind, printableId(row.gid), row.topic_key)
    case 'members':
      return memberIdOf(row)
    default:
      return printableId(row.id)
  }
}

class ZulipSession implements SourceSession {
  readonly snapshotAt: EpochMs
  readonly #conn: SnapshotConnection
  readonly #config: ZulipConfig
  readonly #realm: RealmIds

  constructor(conn: SnapshotConnection, config: ZulipConfig, realm: RealmIds) {
    this.snapshotAt = conn.snapshotAt
    this.#conn = conn
    this.#config = config
    this.#realm = realm
  }

  #query(entity: LegacyEntity): ZulipEntityQuery {
    return entityQuery(entity, this.#realm, this.#config)
  }

  #where(q: ZulipEntityQuery, since: EpochMs | undefined) {
    return (params: Params) => (since === undefined ? [] : [`${q.changedAt} >= to_timestamp(${params.add(since)}::float8 / 1000)`])
  }

  async count(entity: LegacyEntity, options: { since?: EpochMs } = {}): Promise<number> {
    const q = this.#query(entity)
    const sql = buildCountQuery(this.#conn.dialect, { from: q.from, where: this.#where(q, options.since) })
    const r = await this.#conn.query(sql.sql, sql.params, `counting ${entity}`)
    return Number(r.rows[0]?.n ?? 0)
  }

  /**
   * Rows whose change time is at or after `since`: users, streams and subscriptions by their latest
   * audit-log event (else their creation), direct-message groups by their first message, messages
   * by the latest of sent, edited and archived.
   */
  countChangedSince(entity: LegacyEntity, since: EpochMs): Promise<number> {
    return this.count(entity, { since })
  }

  async #names(rows: readonly Row[]): Promise<Map<string, string[]>> {
    const names = mentionedNames(rows)
    const found = new Map<string, string[]>()
    for (let i = 0; i < names.length; i += NAME_CHUNK) {
      const chunk = names.slice(i, i + NAME_CHUNK)
      const r = await this.#conn.query(namesQuery(this.#realm, chunk.length), chunk, 'resolving mentions')
      for (const u of r.rows) {
        const name = String(u.name)
        found.set(name, [...(found.get(name) ?? []), String(u.id)])
      }
    }
    return found
  }

  read<E extends LegacyEntity>(entity: E, options: ReadOptions = {}): AsyncIterable<Page<LegacyRecordOf[E]>> {
    const q = this.#query(entity)
    const lossy = this.#conn.lossyText
    const cfg = this.#config
    const common = {
      conn: this.#conn,
      entity,
      keys: q.keys,
      pageSize: options.pageSize ?? cfg.pageSize,
      after: options.after,
      signal: options.signal,
      query: { select: q.select, from: q.from, where: this.#where(q, options.since) },
      legacyIdOf: (row: Row) => legacyIdOfRow(entity, row),
    }
    let spec: PagedReadSpec<LegacyRecordOf[LegacyEntity], Map<string, string[]> | undefined>
    switch (entity) {
      case 'users':
        spec = { ...common, decode: (row) => decodeUser(row, { lossy, siteUrl: cfg.siteUrl?.replace(/\/+$/, '') }) }
        break
      case 'groups':
        spec = { ...common, decode: (row) => decodeGroup(row, lossy) }
        break
      case 'members':
        spec = { ...common, decode: (row) => decodeMember(row) }
        break
      default: {
        const fileBaseUrl = cfg.fileBaseUrl.replace(/\/+$/, '')
        const fileHost = cfg.files === undefined ? undefined : fileSourceHost(cfg.files)
        spec = {
          ...common,
          enrich: (rows) => this.#names(rows),
          decode: (row, names) => decodeMessage(row, { lossy, topics: cfg.topics, fileBaseUrl, fileHost, names: names ?? new Map() }),
        }
      }
    }
    return readPages(spec) as AsyncIterable<Page<LegacyRecordOf[E]>>
  }

  /**
   * The legacy ids of every row an entity reads, paged by its keys: a deactivated user or archived
   * stream is still yielded; an unsubscribed member (`active = false`) or a message moved to the
   * archive (deleted) is gone, as is anything Zulip deleted for good.
   */
  readKeys(entity: LegacyEntity, options: KeysOptions = {}): AsyncIterable<readonly string[]> {
    return readQueryKeys(this.#conn, entity, this.#query(entity), options, (row) => legacyIdOfRow(entity, row))
  }

  close(): Promise<void> {
    return this.#conn.close()
  }
}

/** Finds the realm's id (and the internal realm's); an unknown `realm` is a configuration error. */
async function resolveRealm(conn: SnapshotConnection, realm: string): Promise<RealmIds> {
  const r = await conn.query(REALM_QUERY, [realm], 'finding the realm')
  const row = r.rows[0] ?? {}
  if (row.realm === null || row.realm === undefined) {
    const known = typeof row.known === 'string' ? row.known : 'none'
    throw new ChatferryError('CONFIG_INVALID', `source.realm: no Zulip realm has string_id ${JSON.stringify(realm)}; the database holds ${known}`)
  }
  return { realm: Number(row.realm), internal: Number(row.internal) }
}

/** The Zulip connector for these settings. */
export function createZulipConnector(config: ZulipConfig): SourceConnector {
  const files = config.files
  return {
    id: 'zulip',
    async open() {
      const conn = await openSnapshotConnection(config.url, { connectTimeoutMs: config.connectTimeoutMs })
      try {
        return new ZulipSession(conn, config, await resolveRealm(conn, config.realm))
      } catch (err) {
        await conn.close()
        throw err
      }
    },
    ...(files === undefined ? {} : { files: () => zulipFilesReader(files) }),
  }
}
