/**
 * The Twilio Conversations connector: reads Conversation Services over Twilio's REST API (users,
 * conversations, participants, messages) and turns them into the canonical model; media messages'
 * files through its own reader (files.ts). Opening a session checks the credentials from the
 * environment and lists the conversations with their participants; reads page each entity. The
 * API is live, not a snapshot. See README.md for the mapping.
 */
import { ChatferryError } from '../../src/errors.ts'
import type { KeysOptions, Page, ReadOptions, SourceConnector, SourceSession } from '../../src/model/connector.ts'
import { type EpochMs, type LegacyEntity, legacyIdOf, type LegacyRecordOf } from '../../src/model/records.ts'
import { type PositionedRow, rowPagesOf } from '../rows/pages.ts'
import { TwilioClient } from './client.ts'
import type { TwilioConversationsConfig } from './config.ts'
import { listConversations, listServices } from './directory.ts'
import { twilioFileReader } from './files.ts'
import { groupRows, memberRows, messageRows, type RowsOptions, type RowsSource, userRows } from './rows.ts'

export { type TwilioConversationsConfig, TwilioConversationsConfigSchema } from './config.ts'

class TwilioSession implements SourceSession {
  readonly snapshotAt: EpochMs = Date.now()
  readonly #src: RowsSource
  readonly #pageSize: number
  readonly #counts = new Map<string, Promise<number>>()

  constructor(src: RowsSource, pageSize: number) {
    this.#src = src
    this.#pageSize = pageSize
  }

  #rows(entity: LegacyEntity, o: RowsOptions): AsyncIterable<PositionedRow<LegacyRecordOf[LegacyEntity]>> {
    switch (entity) {
      case 'users':
        return userRows(this.#src, o)
      case 'groups':
        return groupRows(this.#src, o)
      case 'members':
        return memberRows(this.#src, o)
      case 'messages':
        return messageRows(this.#src, o)
    }
  }

  /** A full read, kept for the session (the API has no counts). */
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
    const o: RowsOptions = {
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

function credentials(config: TwilioConversationsConfig): { accountSid: string; authToken: string } {
  const accountSid = process.env[config.accountSidEnv]
  const authToken = process.env[config.authTokenEnv]
  if (!accountSid || !authToken) {
    const missing = [accountSid ? undefined : config.accountSidEnv, authToken ? undefined : config.authTokenEnv].filter(Boolean)
    throw new ChatferryError('CONFIG_INVALID', `source: the Twilio credentials are read from the environment: set ${missing.join(' and ')}`)
  }
  return { accountSid, authToken }
}

export function createTwilioConversationsConnector(config: TwilioConversationsConfig): SourceConnector {
  return {
    id: 'twilio-conversations',
    async open() {
      const creds = credentials(config)
      const client = new TwilioClient({
        baseUrl: config.baseUrl,
        ...creds,
        requestsPerSecond: config.requestsPerSecond,
        maxRetries: config.maxRetries,
      })
      try {
        const services = await listServices(client, config.services, config.apiPageSize)
        const conversations = await listConversations(client, services, config.apiPageSize)
        const src: RowsSource = {
          client,
          services,
          conversations,
          policy: { nonChatParticipants: config.nonChatParticipants },
          apiPageSize: config.apiPageSize,
          mediaBaseUrl: config.mediaBaseUrl,
        }
        return new TwilioSession(src, config.pageSize)
      } catch (err) {
        client.close()
        throw err
      }
    },
    files() {
      return twilioFileReader({ mediaBaseUrl: config.mediaBaseUrl, ...credentials(config) })
    },
  }
}
