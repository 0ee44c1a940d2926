/**
 * The Rocket.Chat connector: reads a `mongodump` directory of a Rocket.Chat database (BSON files,
 * no MongoDB server) document by document and turns it into the canonical model. The dump is the
 * snapshot: it never changes under a read. Entity order: users → groups (rooms) → members
 * (subscriptions) → messages. See README.md for how each Rocket.Chat concept is mapped.
 */
import { dirname, join, resolve } from 'node:path'

import type { KeysOptions, Page, ReadOptions, SourceConnector, SourceSession } from '../../src/model/connector.ts'
import type { EpochMs, LegacyEntity, LegacyRecordOf } from '../../src/model/records.ts'
import { DEFAULT_UPLOADS_BASE_URL, type RocketChatConfig } from './config.ts'
import { collectionKeys, type CollectionSpec, countCollection, readCollection } from './dump/collection-read.ts'
import { buildLookups, type DumpFiles, type DumpLookups, openDumpDir } from './dump/dump-dir.ts'
import { decodeGroup } from './entities/groups.ts'
import { decodeMember, memberIdOf } from './entities/members.ts'
import { decodeMessage } from './entities/messages.ts'
import { isGroupKind, roomKind } from './entities/room-kind.ts'
import { decodeUser } from './entities/users.ts'
import { type Doc, legacyIdOfDoc } from './entities/values.ts'
import { rocketChatFilesReader } from './files/files-reader.ts'
import { uploadLocator } from './files/locator.ts'
import { readUploadIndex, type UploadRecord, UPLOADS_COLLECTION } from './files/upload-index.ts'

export { type RocketChatConfig, type RocketChatConfigInput, RocketChatConfigSchema } from './config.ts'

const noSlash = (url: string | undefined) => url?.replace(/\/+$/, '')

/** Whether a room's documents (subscriptions, messages) are read: not omnichannel; unknown rooms are, as problems. */
function roomIsRead(lookups: DumpLookups, rid: unknown, groupsOnly: boolean): boolean {
  if (typeof rid !== 'string') {
    return true
  }
  const kind = lookups.roomOf(rid)
  if (kind === undefined) {
    return true
  }
  return groupsOnly ? isGroupKind(kind) : kind.kind !== 'omnichannel'
}

/** The collection and decoding of each entity. */
function specs(
  files: DumpFiles,
  lookups: DumpLookups,
  config: RocketChatConfig,
  uploads: ReadonlyMap<string, UploadRecord> | undefined,
): { [E in LegacyEntity]: CollectionSpec<LegacyRecordOf[E]> } {
  const siteUrl = noSlash(config.siteUrl)
  const uploadsBaseUrl = noSlash(config.uploadsBaseUrl) ?? siteUrl ?? DEFAULT_UPLOADS_BASE_URL
  const messageCtx = {
    ...lookups,
    uploadsBaseUrl,
    ...(config.files === undefined || uploads === undefined ? {} : { locateUpload: uploadLocator(config.files, uploads) }),
  }
  return {
    users: { file: files.users, include: () => true, decode: (d) => decodeUser(d, { siteUrl }), legacyIdOf: legacyIdOfDoc },
    groups: {
      file: files.rooms,
      include: (d) => isGroupKind(roomKind(d, lookups.idOfUsername)),
      decode: (d) => decodeGroup(d, roomKind(d, lookups.idOfUsername)),
      legacyIdOf: legacyIdOfDoc,
    },
    members: {
      file: files.subscriptions,
      include: (d) => roomIsRead(lookups, d.rid, true),
      decode: (d) => decodeMember(d, typeof d.rid === 'string' ? lookups.roomOf(d.rid) : undefined),
      legacyIdOf: memberIdOf,
    },
    messages: {
      file: files.messages,
      // Edit-history copies (Message_KeepHistory) are hidden documents naming their original in `parent`.
      include: (d: Doc) => !(d._hidden === true && d.parent !== undefined) && roomIsRead(lookups, d.rid, false),
      decode: (d) => decodeMessage(d, messageCtx),
      legacyIdOf: legacyIdOfDoc,
    },
  }
}

class RocketChatSession implements SourceSession {
  readonly snapshotAt: EpochMs
  readonly #files: DumpFiles
  readonly #config: RocketChatConfig
  #specs?: Promise<ReturnType<typeof specs>>
  /** Counts by entity and `since`: the dump does not change, so one scan answers each. */
  readonly #counts = new Map<string, Promise<number>>()

  constructor(files: DumpFiles, writtenAt: EpochMs, config: RocketChatConfig) {
    this.#files = files
    this.snapshotAt = writtenAt
    this.#config = config
  }

  #spec<E extends LegacyEntity>(entity: E): Promise<CollectionSpec<LegacyRecordOf[E]>> {
    this.#specs ??= Promise.all([
      buildLookups(this.#files),
      // With source.files, each upload's store names its locator's host (one scan of rocketchat_uploads).
      this.#config.files === undefined ? undefined : readUploadIndex(join(dirname(this.#files.users), `${UPLOADS_COLLECTION}.bson`)),
    ]).then(([lookups, uploads]) => specs(this.#files, lookups, this.#config, uploads))
    return this.#specs.then((s) => s[entity] as CollectionSpec<LegacyRecordOf[E]>)
  }

  count(entity: LegacyEntity, options: { since?: EpochMs } = {}): Promise<number> {
    const key = `${entity} ${options.since ?? ''}`
    let n = this.#counts.get(key)
    if (n === undefined) {
      n = this.#spec(entity).then((spec) => countCollection(spec as CollectionSpec<unknown>, options.since))
      n.catch(() => this.#counts.delete(key))
      this.#counts.set(key, n)
    }
    return n
  }

  /** Documents whose `_updatedAt` is at or after `since` (those without one count as changed). */
  countChangedSince(entity: LegacyEntity, since: EpochMs): Promise<number> {
    return this.count(entity, { since })
  }

  read<E extends LegacyEntity>(entity: E, options: ReadOptions = {}): AsyncIterable<Page<LegacyRecordOf[E]>> {
    const pageSize = options.pageSize ?? this.#config.pageSize
    const spec = () => this.#spec(entity)
    return {
      async *[Symbol.asyncIterator]() {
        yield* readCollection(await spec(), { ...options, pageSize })
      },
    }
  }

  /** Every user, group room (archived too), group subscription and visible message (`t: 'rm'` too). */
  readKeys(entity: LegacyEntity, options: KeysOptions = {}): AsyncIterable<readonly string[]> {
    const spec = () => this.#spec(entity)
    return {
      async *[Symbol.asyncIterator]() {
        yield* collectionKeys((await spec()) as CollectionSpec<unknown>, options.pageSize, options.signal)
      },
    }
  }

  close(): Promise<void> {
    return Promise.resolve()
  }
}

/** The Rocket.Chat connector for these settings. */
export function createRocketChatConnector(config: RocketChatConfig): SourceConnector {
  const filesConfig = config.files
  return {
    id: 'rocketchat',
    async open() {
      const { files, writtenAt } = await openDumpDir(config.path)
      return new RocketChatSession(files, writtenAt, config)
    },
    ...(filesConfig === undefined ? {} : { files: () => rocketChatFilesReader(resolve(config.path), filesConfig) }),
  }
}
