/**
 * The session of a live API connector (Sendbird's Platform API, Stream Chat's REST API, Twilio
 * Conversations): the connector says how an entity's rows are listed ({@link ApiSource}), the
 * session does the rest. The API has no snapshot: `snapshotAt` is when the session opened, and
 * what changes during a read may or may not be seen (the next delta reads it). The API has no
 * totals that match a read, so a count reads the entity through and is kept for the session (a
 * failed count is not kept). `readKeys` lists the legacy ids of the rows that decode.
 */
import type { Cursor, KeysOptions, Page, ReadOptions, SourceSession } from '../../src/model/connector.ts'
import { type EpochMs, type LegacyEntity, type LegacyRecordOf } from '../../src/model/records.ts'
import { keyPagesOf, pagesOf, type PositionedRow } from './pages.ts'

/** Where an API read starts and what it keeps: undefined options are left out. */
export interface ApiRowsOptions {
  readonly after?: Cursor
  readonly since?: EpochMs
  readonly signal?: AbortSignal
}

/** What a live API connector gives its session. */
export interface ApiSource {
  /** An entity's rows after `after` (changed since `since`), in batches of any size. */
  rows(entity: LegacyEntity, options: ApiRowsOptions): AsyncIterable<readonly PositionedRow<LegacyRecordOf[LegacyEntity]>[]>
  /** Rows per page when a read names none (`source.pageSize`). */
  readonly pageSize: number
  /** Whether a delta can count the entity's changes (default: every entity); `countChangedSince` is undefined for the others. */
  countsChanges?(entity: LegacyEntity): boolean
  /** Ends the client (its pacing timers, its sockets). */
  close(): void
}

/** Keys per page when `readKeys` is asked for none. */
const KEYS_PAGE = 10_000

export class ApiSession implements SourceSession {
  readonly snapshotAt: EpochMs = Date.now()
  readonly #src: ApiSource
  readonly #counts = new Map<string, Promise<number>>()

  constructor(src: ApiSource) {
    this.#src = src
  }

  read<E extends LegacyEntity>(entity: E, options: ReadOptions = {}): AsyncIterable<Page<LegacyRecordOf[E]>> {
    const o: ApiRowsOptions = {
      ...(options.after !== undefined ? { after: options.after } : {}),
      ...(options.since !== undefined ? { since: options.since } : {}),
      ...(options.signal !== undefined ? { signal: options.signal } : {}),
    }
    return pagesOf(this.#src.rows(entity, o), options.pageSize ?? this.#src.pageSize, options.signal) as AsyncIterable<Page<LegacyRecordOf[E]>>
  }

  /** A full read of the entity (its changes since `since`), kept for the session. */
  count(entity: LegacyEntity, options: { since?: EpochMs } = {}): Promise<number> {
    const key = `${entity} ${options.since ?? ''}`
    let n = this.#counts.get(key)
    if (n === undefined) {
      n = (async () => {
        let c = 0
        for await (const batch of this.#src.rows(entity, options.since !== undefined ? { since: options.since } : {})) {
          c += batch.length
        }
        return c
      })()
      n.catch(() => this.#counts.delete(key))
      this.#counts.set(key, n)
    }
    return n
  }

  async countChangedSince(entity: LegacyEntity, since: EpochMs): Promise<number | undefined> {
    return (this.#src.countsChanges?.(entity) ?? true) ? this.count(entity, { since }) : undefined
  }

  async *readKeys(entity: LegacyEntity, options: KeysOptions = {}): AsyncIterable<readonly string[]> {
    yield* keyPagesOf(entity, this.#src.rows(entity, options.signal ? { signal: options.signal } : {}), options.pageSize ?? KEYS_PAGE)
  }

  async close(): Promise<void> {
    this.#src.close()
  }
}
