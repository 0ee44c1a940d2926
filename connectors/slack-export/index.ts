/**
 * The Slack export connector: reads a Slack export — the ZIP Slack gives you or the folder it
 * unpacks to, standard or corporate — in place, file by file, and turns it into the canonical
 * model. Entity order: users → groups (channels, private channels, group DMs) → members → messages.
 * The export is the snapshot: it never changes under a read. See README.md for the mapping.
 */
import { existsSync } from 'node:fs'
import { resolve } from 'node:path'

import { ChatferryError } from '../../src/errors.ts'
import type { GroupActivity, KeysOptions, Page, ReadOptions, SourceConnector, SourceSession } from '../../src/model/connector.ts'
import { type EpochMs, type LegacyEntity, type LegacyRecordOf } from '../../src/model/records.ts'
import { type ExportArchive, openArchive } from '../archive/archive.ts'
import { arrayFileBatches } from '../archive/array-file.ts'
import { keyPagesOf, pagesOf, type PositionedRow, single } from '../rows/pages.ts'
import type { SlackExportConfig } from './config.ts'
import { isObject, isTs, tsMs } from './entities/fields.ts'
import type { TextLookups } from './entities/message-text.ts'
import { slackFilesReader } from './files-reader.ts'
import { DAY_FILE, type Layout, readLayout } from './layout.ts'
import { botRows } from './read-bots.ts'
import { groupRows, memberRows } from './read-groups.ts'
import { messageRows } from './read-messages.ts'
import { handlesById, userRows } from './read-users.ts'
import { inRefused, refusedRows } from './refused-rows.ts'

export { type SlackExportConfig, type SlackExportConfigInput, SlackExportConfigSchema } from './config.ts'

const ARCHIVE_SUBTYPES = new Set(['channel_archive', 'group_archive'])

class SlackExportSession implements SourceSession {
  readonly snapshotAt: EpochMs
  readonly #archive: ExportArchive
  readonly #layout: Layout
  readonly #config: SlackExportConfig
  #handles: Promise<Map<string, string>> | undefined

  constructor(archive: ExportArchive, layout: Layout, config: SlackExportConfig) {
    this.#archive = archive
    this.#layout = layout
    this.#config = config
    this.snapshotAt = archive.modifiedAt
  }

  /** The latest archive message of a conversation folder, else the export's time. */
  async #archivedAt(folder: string): Promise<number> {
    const days = this.#archive.filesIn(folder).filter((f) => DAY_FILE.test(f))
    for (const day of days.toReversed()) {
      let found: number | undefined
      for await (const item of this.#items(`${folder}/${day}`)) {
        if ('value' in item && isObject(item.value) && ARCHIVE_SUBTYPES.has(String(item.value.subtype))) {
          try {
            found = Math.max(found ?? 0, tsMs('ts', item.value.ts))
          } catch {
            // an unreadable ts is reported by the messages read
          }
        }
      }
      if (found !== undefined) {
        return found
      }
    }
    return this.snapshotAt
  }

  /** A day file's items in file order, whatever its size. */
  async *#items(path: string) {
    for await (const batch of arrayFileBatches(this.#archive, path, this.#archive.limits.maxElementBytes)) {
      yield* batch
    }
  }

  async #lookups(): Promise<TextLookups> {
    this.#handles ??= handlesById(this.#archive, this.#layout.usersFile)
    const handles = await this.#handles
    const names = this.#layout.nameById
    return { handleOf: (id) => handles.get(id), channelNameOf: (id) => names.get(id) }
  }

  /** The entity's rows in batches (one per day file for messages, one row for the others). */
  async *#rows(entity: LegacyEntity, options: ReadOptions): AsyncGenerator<PositionedRow<LegacyRecordOf[LegacyEntity]>[]> {
    const archive = this.#archive
    yield* single(refusedRows(archive, entity, options.after))
    const after = inRefused(options.after) ? undefined : options.after
    const { since, signal } = options
    switch (entity) {
      case 'users':
        // The integration bots (read-bots.ts) come after the users file: a cursor `{b}` is among them.
        if (typeof after?.b !== 'number') {
          yield* single(userRows({ archive, file: this.#layout.usersFile, exportTime: this.snapshotAt, after, since }))
        }
        yield* single(botRows(archive, this.#layout.usersFile, after))
        return
      case 'groups':
        yield* single(groupRows({ archive, after, archivedAt: (folder) => this.#archivedAt(folder) }))
        return
      case 'members':
        yield* single(memberRows(archive, after))
        return
      case 'messages': {
        const lookups = await this.#lookups()
        const fileUrl = this.#config.fileUrl
        const maxElementBytes = archive.limits.maxElementBytes
        yield* messageRows({
          archive,
          layout: this.#layout,
          lookups,
          maxElementBytes,
          hasFileToken: this.#config.fileToken !== undefined,
          after,
          since,
          signal,
          ...(fileUrl !== undefined ? { fileUrl } : {}),
        })
      }
    }
  }

  /**
   * Per group conversation, its earliest message: the smallest `ts` of its first day file (one file
   * per conversation). Members have no join time in an export.
   */
  async groupActivity(options: { readonly signal?: AbortSignal } = {}): Promise<ReadonlyMap<string, GroupActivity>> {
    const found = new Map<string, GroupActivity>()
    for (const conv of this.#layout.byFolder.values()) {
      options.signal?.throwIfAborted()
      const first = this.#archive.filesIn(conv.folder).find((f) => DAY_FILE.test(f))
      if (conv.kind === 'dm' || first === undefined) {
        continue
      }
      let earliest: number | undefined
      for await (const item of this.#items(`${conv.folder}/${first}`)) {
        if ('value' in item && isObject(item.value) && isTs(item.value.ts)) {
          const t = tsMs('ts', item.value.ts)
          earliest = earliest === undefined ? t : Math.min(earliest, t)
        }
      }
      if (earliest !== undefined) {
        found.set(conv.id, { firstSentAt: earliest })
      }
    }
    return found
  }

  /** Rows a read yields (problems included): counted by reading, as an export has no index. */
  async count(entity: LegacyEntity, options: { since?: EpochMs } = {}): Promise<number> {
    let n = 0
    for await (const batch of this.#rows(entity, options.since !== undefined ? { since: options.since } : {})) {
      n += batch.length
    }
    return n
  }

  /** Users (`updated`) and messages (`ts`, `edited.ts`) have change times; groups and members do not. */
  async countChangedSince(entity: LegacyEntity, since: EpochMs): Promise<number | undefined> {
    return entity === 'users' || entity === 'messages' ? this.count(entity, { since }) : undefined
  }

  read<E extends LegacyEntity>(entity: E, options: ReadOptions = {}): AsyncIterable<Page<LegacyRecordOf[E]>> {
    return pagesOf(this.#rows(entity, options), options.pageSize ?? this.#config.pageSize, options.signal) as AsyncIterable<Page<LegacyRecordOf[E]>>
  }

  /** The legacy ids of every record of the entity, from a full read (an export has no key index). */
  async *readKeys(entity: LegacyEntity, options: KeysOptions = {}): AsyncIterable<readonly string[]> {
    yield* keyPagesOf(entity, this.#rows(entity, options.signal ? { signal: options.signal } : {}), options.pageSize ?? 10_000, options.signal)
  }

  close(): Promise<void> {
    return this.#archive.close()
  }
}

/** The Slack export connector for these settings. */
export function createSlackExportConnector(config: SlackExportConfig): SourceConnector {
  return {
    id: 'slack-export',
    async open() {
      const { maxEntryBytes, maxArchiveBytes, maxElementBytes } = config
      const archive = await openArchive(resolve(config.path), { maxEntryBytes, maxArchiveBytes, maxElementBytes })
      try {
        return new SlackExportSession(archive, await readLayout(archive), config)
      } catch (err) {
        await archive.close()
        throw err
      }
    },
    files() {
      if (!existsSync(config.path)) {
        throw new ChatferryError(
          'CONFIG_INVALID',
          `source.path: ${config.path} does not exist; it must be the Slack export (its ZIP or the folder it unpacks to)`,
        )
      }
      return slackFilesReader({ ...config, path: resolve(config.path) })
    },
  }
}
