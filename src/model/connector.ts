/**
 * The connector interface: how chatferry reads a legacy database. One implementation per folder in
 * `connectors/`, registered in `connectors/index.ts`.
 *
 * Rules every connector keeps:
 * - it only ever reads, inside one read-only transaction per session, so all entities of a run
 *   come from one consistent snapshot;
 * - it pages by key (keyset), never OFFSET, and holds at most one page in memory;
 * - a row it cannot turn into a record is yielded as a {@link RowProblem}, never thrown, so the run
 *   goes on and the row is quarantined with its reason;
 * - every row is accounted for: a read yields exactly as many rows (records + problems) as
 *   {@link SourceSession.count} counts, rows with a NULL or duplicate key included (as problems);
 * - one legacy id is one record: when rows of different keys share a legacy id, the row with the
 *   smallest key is the record and every other is a problem naming it, decided from the whole
 *   snapshot so that any read of it (resumed, delta, concurrent) decides alike.
 */
import type { FileReader } from './files.ts'
import type { EpochMs, LegacyEntity, LegacyRecordOf } from './records.ts'

/** Where reading an entity stands: the key of the last row read. JSON-serialisable, opaque. */
export type Cursor = { readonly [key: string]: string | number | null }

/**
 * A choice a connector made reading a row: a policy of its settings or a fixed rule its README
 * names (`{policy: 'nonChatParticipants', outcome: 'user-created'}`). Optional on every row:
 * planning counts it with the mappings' policy outcomes (the plan's "policy outcomes"), so what a
 * source setting changed or dropped is reported like what a mapping policy did.
 */
export interface SourceOutcome {
  /** The setting's name (`customFields`) or the rule's (`oneToOneChannels`), camelCase. */
  readonly policy: string
  /** What it did to the row (`in-metadata`, `dropped`, `direct-message`), kebab-case. */
  readonly outcome: string
}

/** A row that could not become a record. */
export interface RowProblem {
  readonly ok: false
  /** The row's legacy id as far as it could be read (`?` when even that failed). */
  readonly legacyId: string
  /** The column or field at fault. */
  readonly field: string
  readonly reason: string
  /**
   * Tells apart problems of rows that share a legacy id (the twins of a duplicate key, rows whose
   * key is NULL, the rows of a legacy id repeated under other keys), so each keeps its own entry
   * in the ledger. Stable across reads of one snapshot.
   */
  readonly instance?: string
  /** The connector's choices that made it a problem (a setting that drops such rows), counted. */
  readonly outcomes?: readonly SourceOutcome[]
}

export type SourceRow<T> =
  | {
      readonly ok: true
      readonly record: T
      /** The connector's choices about this record (what it changed or left out), counted. */
      readonly outcomes?: readonly SourceOutcome[]
    }
  | RowProblem

export interface Page<T> {
  readonly rows: readonly SourceRow<T>[]
  /** Resume point: passing it as `after` reads the rows after this page. */
  readonly cursor: Cursor
  /** The highest change time seen so far in this read, for the next delta run. */
  readonly watermark?: EpochMs
}

export interface ReadOptions {
  /** Start after this cursor (resume); from the beginning when absent. */
  readonly after?: Cursor
  /** Rows per page. @default 1000 */
  readonly pageSize?: number
  /** Delta mode: only rows added or changed after this time. */
  readonly since?: EpochMs
  readonly signal?: AbortSignal
}

/** Options of {@link SourceSession.readKeys}. */
export interface KeysOptions {
  /** Keys per page. @default 10000 */
  readonly pageSize?: number
  readonly signal?: AbortSignal
}

/** The earliest times the source holds for one group (epoch ms; absent: none readable). */
export interface GroupActivity {
  /** The earliest `joinedAt` of its members. */
  readonly firstJoinedAt?: EpochMs
  /** The earliest `sentAt` of the messages sent to it. */
  readonly firstSentAt?: EpochMs
}

/** One read-only snapshot of the legacy database. */
export interface SourceSession {
  /** When the snapshot was taken (the database's clock), for reports. */
  readonly snapshotAt: EpochMs
  /** Rows of an entity in the snapshot (before mapping; problems included): what a full read yields. */
  count(entity: LegacyEntity, options?: { since?: EpochMs }): Promise<number>
  /** Pages of records in key order. Releases its resources when the consumer stops early. */
  read<E extends LegacyEntity>(entity: E, options?: ReadOptions): AsyncIterable<Page<LegacyRecordOf[E]>>
  /**
   * Optional: per legacy group id, the earliest member join and the earliest group message in this
   * snapshot — one grouped query per entity, answered before members and messages are read, so a
   * group the source gives no creation time can be given one no later than either. Groups with
   * neither are absent. A connector whose groups always carry their creation time may leave it out.
   */
  groupActivity?(options?: { readonly signal?: AbortSignal }): Promise<ReadonlyMap<string, GroupActivity>>
  /**
   * Optional: how many rows of `entity` changed at or after `since` (epoch ms), judged by the same
   * change-time column delta mode reads by (`>=`, so a row sharing the instant counts). `run
   * --delta --final` asks it in a fresh snapshot after its load, with the time its read began, to
   * tell whether the legacy system is still being written. `undefined` when the entity has no
   * change-time column (nothing can tell); 0 for an entity the source does not have.
   */
  countChangedSince?(entity: LegacyEntity, since: EpochMs): Promise<number | undefined>
  /**
   * Optional: the legacy ids of every row of an entity in this snapshot (`legacyIdOf`: members as
   * `<groupId>/<userId>`), in pages, keyset-paged in key order — keys only, no record is built.
   * Planning compares them with the ledger's loaded items to find rows hard-deleted from the
   * source (`changes.vanished`). A row that is only soft-deleted or deactivated is still yielded
   * (its change arrives through {@link read}). Releases its resources when the consumer stops.
   * Undefined when the connector reads no rows of this entity (not configured): then there is
   * nothing to compare with, and no loaded item may count as gone.
   */
  readKeys?(entity: LegacyEntity, options?: KeysOptions): AsyncIterable<readonly string[]> | undefined
  /** Ends the snapshot and releases connections; idempotent. */
  close(): Promise<void>
}

export interface SourceConnector {
  /** The registry key, e.g. `generic-sql`, `mattermost`. */
  readonly id: string
  /**
   * Opens a snapshot. Fails with a ChatferryError('SOURCE_UNAVAILABLE') naming the source (never
   * its password) when the database cannot be reached.
   */
  open(): Promise<SourceSession>
  /**
   * Optional: the reader of this source's files (attachments whose `source.reader` is this
   * connector's id), for the files lane. Tokens and paths come from the connector's settings.
   */
  files?(): FileReader
}
