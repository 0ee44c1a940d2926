/**
 * One read of a Sendbird application over the Platform API. The API has no snapshot: each list is
 * read as it is when its page is asked (a message sent during the read may or may not be seen;
 * the next delta reads it). Counting reads the entity through (the API has no totals that match
 * a read), so `plan` reads each entity twice; counts are kept for the session.
 */
import type { KeysOptions, Page, ReadOptions, SourceSession } from '../../../src/model/connector.ts'
import { type EpochMs, type LegacyEntity, legacyIdOf, type LegacyRecordOf } from '../../../src/model/records.ts'
import { pagesOf, type PositionedRow } from '../../rows/pages.ts'
import type { SendbirdClient } from './client.ts'
import { type ApiRead, groupRows, memberRows, messageRows, userRows } from './rows.ts'

export class SendbirdApiSession implements SourceSession {
  readonly snapshotAt: EpochMs = Date.now()
  readonly #client: SendbirdClient
  readonly #pageSize: number
  readonly #counts = new Map<string, number>()

  constructor(client: SendbirdClient, pageSize: number) {
    this.#client = client
    this.#pageSize = pageSize
  }

  #rows(entity: LegacyEntity, options: ReadOptions): AsyncGenerator<PositionedRow<LegacyRecordOf[LegacyEntity]>[]> {
    const r: ApiRead = { client: this.#client, after: options.after, since: options.since, signal: options.signal }
    switch (entity) {
      case 'users':
        return userRows(r)
      case 'groups':
        return groupRows(r)
      case 'members':
        return memberRows(r)
      case 'messages':
        return messageRows(r)
    }
  }

  read<E extends LegacyEntity>(entity: E, options: ReadOptions = {}): AsyncIterable<Page<LegacyRecordOf[E]>> {
    return pagesOf(this.#rows(entity, options), options.pageSize ?? this.#pageSize, options.signal) as AsyncIterable<Page<LegacyRecordOf[E]>>
  }

  async count(entity: LegacyEntity, options: { since?: EpochMs } = {}): Promise<number> {
    const key = `${entity}:${options.since ?? ''}`
    const known = this.#counts.get(key)
    if (known !== undefined) {
      return known
    }
    let n = 0
    for await (const batch of this.#rows(entity, options.since !== undefined ? { since: options.since } : {})) {
      n += batch.length
    }
    this.#counts.set(key, n)
    return n
  }

  /** Messages by their creation time (the list's `message_ts`); the rest have no change time the API lists by. */
  async countChangedSince(entity: LegacyEntity, since: EpochMs): Promise<number | undefined> {
    return entity === 'messages' ? this.count(entity, { since }) : undefined
  }

  async *readKeys(entity: LegacyEntity, options: KeysOptions = {}): AsyncIterable<readonly string[]> {
    const size = options.pageSize ?? 10_000
    let keys: string[] = []
    for await (const batch of this.#rows(entity, options.signal ? { signal: options.signal } : {})) {
      for (const { row } of batch) {
        if (row.ok) {
          keys.push(legacyIdOf(entity, row.record))
          if (keys.length >= size) {
            yield keys
            keys = []
          }
        }
      }
    }
    if (keys.length > 0) {
      yield keys
    }
  }

  async close(): Promise<void> {}
}
