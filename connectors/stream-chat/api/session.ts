/**
 * A session over the Stream Chat REST API. Opening it checks the credentials from the environment
 * (CONFIG_INVALID naming the missing variable; SOURCE_INVALID, exit 2, when Stream refuses them)
 * and lists the app's channels (directory.ts); reads page each entity from the API (rows.ts).
 * The API is live, not a snapshot: `snapshotAt` is when the session opened, and what changes
 * during a read may or may not be seen (a later delta picks it up). Counts are full reads, kept
 * for the session.
 */
import { ChatferryError } from '../../../src/errors.ts'
import type { KeysOptions, Page, ReadOptions, SourceSession } from '../../../src/model/connector.ts'
import { type EpochMs, type LegacyEntity, legacyIdOf, type LegacyRecordOf } from '../../../src/model/records.ts'
import { type PositionedRow, rowPagesOf } from '../../rows/pages.ts'
import { STREAM_DEFAULT_LIMITS, type StreamApiConfig, type StreamChatConfig } from '../config.ts'
import { serverToken } from './auth.ts'
import { StreamClient } from './client.ts'
import { listChannels } from './directory.ts'
import { apiGroupRows, apiMemberRows, apiMessageRows, type ApiRowsOptions, type ApiRowsSource, apiUserRows } from './rows.ts'

class StreamChatApiSession implements SourceSession {
  readonly snapshotAt: EpochMs = Date.now()
  readonly #src: ApiRowsSource
  readonly #pageSize: number
  readonly #counts = new Map<string, Promise<number>>()

  constructor(src: ApiRowsSource, pageSize: number) {
    this.#src = src
    this.#pageSize = pageSize
  }

  #rows(entity: LegacyEntity, o: ApiRowsOptions): AsyncIterable<PositionedRow<LegacyRecordOf[LegacyEntity]>> {
    switch (entity) {
      case 'users':
        return apiUserRows(this.#src, o)
      case 'groups':
        return apiGroupRows(this.#src, o)
      case 'members':
        return apiMemberRows(this.#src, o)
      case 'messages':
        return apiMessageRows(this.#src, o)
    }
  }

  count(entity: LegacyEntity, options: { since?: EpochMs } = {}): Promise<number> {
    const key = `${entity} ${options.since ?? ''}`
    let n = this.#counts.get(key)
    if (n === undefined) {
      n = (async () => {
        let c = 0
        for await (const _ of this.#rows(entity, options.since !== undefined ? { since: options.since } : {})) {
          c++
        }
        return c
      })()
      this.#counts.set(key, n)
    }
    return n
  }

  countChangedSince(entity: LegacyEntity, since: EpochMs): Promise<number> {
    return this.count(entity, { since })
  }

  read<E extends LegacyEntity>(entity: E, options: ReadOptions = {}): AsyncIterable<Page<LegacyRecordOf[E]>> {
    const o: ApiRowsOptions = {
      ...(options.after !== undefined ? { after: options.after } : {}),
      ...(options.since !== undefined ? { since: options.since } : {}),
      ...(options.signal !== undefined ? { signal: options.signal } : {}),
    }
    return rowPagesOf(this.#rows(entity, o), options.pageSize ?? this.#pageSize, options.signal) as AsyncIterable<Page<LegacyRecordOf[E]>>
  }

  async *readKeys(entity: LegacyEntity, options: KeysOptions = {}): AsyncIterable<readonly string[]> {
    const size = options.pageSize ?? 10_000
    let keys: string[] = []
    for await (const { row } of this.#rows(entity, options.signal ? { signal: options.signal } : {})) {
      if (row.ok) {
        keys.push(legacyIdOf(entity, row.record))
        if (keys.length >= size) {
          yield keys
          keys = []
        }
      }
    }
    if (keys.length > 0) {
      yield keys
    }
  }

  async close(): Promise<void> {
    this.#src.client.close()
  }
}

/** The key and secret from the environment, or CONFIG_INVALID naming every missing variable. */
function credentials(api: StreamApiConfig): { apiKey: string; secret: string } {
  const apiKey = process.env[api.keyEnv]
  const secret = process.env[api.secretEnv]
  const missing = [apiKey ? undefined : api.keyEnv, secret ? undefined : api.secretEnv].filter((v): v is string => v !== undefined)
  if (missing.length > 0 || apiKey === undefined || secret === undefined) {
    throw new ChatferryError('CONFIG_INVALID', `source.api: the Stream Chat credentials are read from the environment: set ${missing.join(' and ')}`)
  }
  return { apiKey, secret }
}

export async function openApi(config: StreamChatConfig, api: StreamApiConfig): Promise<SourceSession> {
  const { apiKey, secret } = credentials(api)
  const client = new StreamClient({
    baseUrl: api.baseUrl,
    credentials: { apiKey, token: serverToken(secret) },
    limits: { ...STREAM_DEFAULT_LIMITS, ...api.limits },
    maxRetries: api.maxRetries,
  })
  try {
    const channels = await listChannels(client)
    const src: ApiRowsSource = {
      client,
      channels,
      keepCustom: config.customFields === 'metadata',
      customChannelTypes: config.customChannelTypes,
      messagePageSize: api.messagePageSize,
    }
    return new StreamChatApiSession(src, config.pageSize)
  } catch (err) {
    client.close()
    throw err
  }
}
