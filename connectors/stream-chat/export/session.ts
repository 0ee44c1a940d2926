/**
 * A session over a Stream Chat channel export file (v1 JSON or v2 line-separated JSON, plain or
 * gzip), read in place. Opening it reads the file only as far as its first channel; the first read
 * or count reads it once for its directory (layout.ts: with users only for a read of users), and
 * message reads stream it again. The file is the snapshot: it never changes under a read.
 */
import { stat } from 'node:fs/promises'
import { resolve } from 'node:path'

import { ChatferryError } from '../../../src/errors.ts'
import type { KeysOptions, Page, ReadOptions, SourceSession } from '../../../src/model/connector.ts'
import { type EpochMs, type LegacyEntity, type LegacyRecordOf } from '../../../src/model/records.ts'
import { at, keyPagesOf, pagesOf, type PositionedRow, single } from '../../rows/pages.ts'
import type { StreamChatConfig } from '../config.ts'
import { type ExportFormat, formatOf } from './events.ts'
import { ExportDirectory, firstChannel } from './layout.ts'
import { groupRows, memberRows, messageRows, type RowsOptions, type RowsSource, userRows } from './rows.ts'

export { type StreamChatConfig, type StreamChatConfigInput, StreamChatConfigSchema } from '../config.ts'

class StreamChatExportSession implements SourceSession {
  readonly snapshotAt: EpochMs
  readonly #src: RowsSource
  readonly #pageSize: number

  constructor(src: RowsSource, modifiedAt: EpochMs, pageSize: number) {
    this.#src = src
    this.snapshotAt = modifiedAt
    this.#pageSize = pageSize
  }

  /** An entity's rows in batches: messages a chunk of the file at a time, the directory's entities one by one. */
  #rows(entity: LegacyEntity, o: RowsOptions): AsyncIterable<PositionedRow<LegacyRecordOf[LegacyEntity]>[]> {
    switch (entity) {
      case 'users':
        return single(userRows(this.#src, o))
      case 'groups':
        return single(groupRows(this.#src, o))
      case 'members':
        return single(memberRows(this.#src, o))
      case 'messages':
        return messageRows(this.#src, o)
    }
  }

  async count(entity: LegacyEntity, options: { since?: EpochMs } = {}): Promise<number> {
    if (entity === 'messages' && options.since === undefined) {
      const layout = await this.#src.directory.directory()
      return layout.problems.filter((p) => p.entity === 'messages').length + layout.messageCount
    }
    let n = 0
    for await (const batch of this.#rows(entity, { after: -1, ...(options.since !== undefined ? { since: options.since } : {}) })) {
      n += batch.length
    }
    return n
  }

  /** Every entity has change times (`updated_at`, `created_at`; messages also edits and deletes). */
  countChangedSince(entity: LegacyEntity, since: EpochMs): Promise<number> {
    return this.count(entity, { since })
  }

  read<E extends LegacyEntity>(entity: E, options: ReadOptions = {}): AsyncIterable<Page<LegacyRecordOf[E]>> {
    const o: RowsOptions = {
      after: at(options.after, 'n'),
      ...(options.since !== undefined ? { since: options.since } : {}),
      ...(options.signal !== undefined ? { signal: options.signal } : {}),
    }
    return pagesOf(this.#rows(entity, o), options.pageSize ?? this.#pageSize, options.signal) as AsyncIterable<Page<LegacyRecordOf[E]>>
  }

  async *readKeys(entity: LegacyEntity, options: KeysOptions = {}): AsyncIterable<readonly string[]> {
    const rows = this.#rows(entity, { after: -1, ...(options.signal ? { signal: options.signal } : {}) })
    yield* keyPagesOf(entity, rows, options.pageSize ?? 10_000, options.signal)
  }

  async close(): Promise<void> {
    // Nothing is held open between reads: each read opens the file and closes it when it ends.
  }
}

/** Opens the export file at `path` (SOURCE_UNAVAILABLE when it cannot be read, SOURCE_INVALID when it holds no channel). */
export async function openExport(config: StreamChatConfig, file: string): Promise<SourceSession> {
  const path = resolve(file)
  let modifiedAt: number
  try {
    const s = await stat(path)
    if (!s.isFile()) {
      throw Object.assign(new Error('not a file'), { code: 'EISDIR' })
    }
    modifiedAt = s.mtimeMs
  } catch (err) {
    throw new ChatferryError(
      'SOURCE_UNAVAILABLE',
      `cannot read the Stream Chat export ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
      { cause: err },
    )
  }
  const format: ExportFormat = formatOf(path, config.format)
  const { found, broken: why } = await firstChannel(path, format, config.maxElementBytes)
  if (!found) {
    throw new ChatferryError(
      'SOURCE_INVALID',
      `the Stream Chat export ${path} holds no channel (read as ${format === 'json' ? 'a v1 JSON export' : 'a v2 line-separated export'})${why !== undefined ? `: ${why}` : ''}`,
    )
  }
  const src: RowsSource = {
    path,
    format,
    maxElementBytes: config.maxElementBytes,
    directory: new ExportDirectory(path, format, config.maxElementBytes),
    keepCustom: config.customFields === 'metadata',
    customChannelTypes: config.customChannelTypes,
  }
  return new StreamChatExportSession(src, Math.floor(modifiedAt), config.pageSize)
}
