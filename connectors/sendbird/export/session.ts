/**
 * One read of Sendbird Data Export files: the users, channels and messages exports as configured.
 * The files are the snapshot: they cannot change under a read. Counting and key listing read the
 * files again (an export has no index). The one-to-one channels (two user ids each) are gathered
 * from the channels export once per session, for the messages read: memory in the number of
 * one-to-one channels, never in messages.
 */
import type { KeysOptions, Page, ReadOptions, SourceSession } from '../../../src/model/connector.ts'
import { type EpochMs, type LegacyEntity, type LegacyRecordOf } from '../../../src/model/records.ts'
import type { ExportArchive } from '../../archive/archive.ts'
import { keyPagesOf, pagesOf, type PositionedRow } from '../../rows/pages.ts'
import type { SendbirdExportConfig } from '../config.ts'
import { channelShape } from '../entities/channels.ts'
import type { DataFile } from './files.ts'
import { fileItems } from './files.ts'
import { groupRows, memberRows, messageRows, type ReadFrom, userRows } from './rows.ts'

export interface ExportFiles {
  readonly archives: readonly ExportArchive[]
  readonly users: readonly DataFile[]
  readonly channels: readonly DataFile[]
  readonly messages: readonly DataFile[]
}

export class SendbirdExportSession implements SourceSession {
  readonly snapshotAt: EpochMs
  readonly #files: ExportFiles
  readonly #config: SendbirdExportConfig
  readonly #pageSize: number
  #direct: Promise<Map<string, readonly [string, string]>> | undefined

  constructor(files: ExportFiles, config: SendbirdExportConfig, pageSize: number) {
    this.#files = files
    this.#config = config
    this.#pageSize = pageSize
    this.snapshotAt = Math.max(0, ...files.archives.map((a) => a.modifiedAt))
  }

  /** The one-to-one channels of the channels export, by URL. */
  async #directChannels(): Promise<Map<string, readonly [string, string]>> {
    const found = new Map<string, readonly [string, string]>()
    for (const file of this.#files.channels) {
      for await (const batch of fileItems(file, this.#config.csvDelimiter, this.#config.maxElementBytes)) {
        for (const item of batch) {
          if ('value' in item) {
            try {
              const shape = channelShape(item.value)
              if (shape.direct !== undefined) {
                found.set(shape.url, shape.direct)
              }
            } catch {
              // reported by the groups read
            }
          }
        }
      }
    }
    return found
  }

  async *#rows(entity: LegacyEntity, options: ReadOptions): AsyncGenerator<PositionedRow<LegacyRecordOf[LegacyEntity]>[]> {
    const base = {
      csvDelimiter: this.#config.csvDelimiter,
      maxElementBytes: this.#config.maxElementBytes,
      after: options.after,
      since: options.since,
      signal: options.signal,
    }
    const from = (files: readonly DataFile[]): ReadFrom => ({ ...base, files })
    switch (entity) {
      case 'users':
        yield* userRows(from(this.#files.users))
        return
      case 'groups':
        yield* groupRows(from(this.#files.channels))
        return
      case 'members':
        yield* memberRows(from(this.#files.channels))
        return
      case 'messages': {
        this.#direct ??= this.#directChannels()
        const direct = await this.#direct
        yield* messageRows(from(this.#files.messages), (url) => direct.get(url))
      }
    }
  }

  read<E extends LegacyEntity>(entity: E, options: ReadOptions = {}): AsyncIterable<Page<LegacyRecordOf[E]>> {
    return pagesOf(this.#rows(entity, options), options.pageSize ?? this.#pageSize, options.signal) as AsyncIterable<Page<LegacyRecordOf[E]>>
  }

  /** Rows a read yields, problems included: counted by reading. */
  async count(entity: LegacyEntity, options: { since?: EpochMs } = {}): Promise<number> {
    let n = 0
    for await (const batch of this.#rows(entity, options.since !== undefined ? { since: options.since } : {})) {
      n += batch.length
    }
    return n
  }

  /** Only messages have a change time (`updated_at`, else `created_at`). */
  async countChangedSince(entity: LegacyEntity, since: EpochMs): Promise<number | undefined> {
    return entity === 'messages' ? this.count(entity, { since }) : undefined
  }

  async *readKeys(entity: LegacyEntity, options: KeysOptions = {}): AsyncIterable<readonly string[]> {
    yield* keyPagesOf(entity, this.#rows(entity, options.signal ? { signal: options.signal } : {}), options.pageSize ?? 10_000)
  }

  async close(): Promise<void> {
    await Promise.all(this.#files.archives.map((a) => a.close()))
  }
}
