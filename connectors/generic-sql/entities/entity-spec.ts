/**
 * What the generic SQL connector knows about each entity's query: the columns it must and may
 * return, its default keys, the column delta mode filters on, and how a row becomes a record.
 */
import type { FileLocator } from '../../../src/model/files.ts'
import type { LegacyEntity, LegacyRecordOf } from '../../../src/model/records.ts'
import type { TimeFormat } from '../../sql/decode.ts'

/** What a row decoder needs besides the row. */
export interface DecodeContext {
  readonly timeFormat: TimeFormat
  /** See `SnapshotConnection.lossyText`. */
  readonly lossy: boolean
  /** The locator of one attachment object (`source.files`), for the files lane; absent: none. */
  readonly locate?: (item: Record<string, unknown>) => FileLocator | undefined
}

export interface EntitySpec<E extends LegacyEntity> {
  readonly entity: E
  /** Columns the query must return (besides the keys). */
  readonly required: readonly string[]
  /** Columns read when present. */
  readonly optional: readonly string[]
  readonly defaultKeys: readonly string[]
  /** The columns the legacy id is made of; when a key column is not one of them, an id may repeat under two keys. */
  readonly idColumns: readonly string[]
  /** Delta mode filters on the first of these the query returns. */
  readonly deltaColumns: readonly string[]
  decode(row: Record<string, unknown>, ctx: DecodeContext): LegacyRecordOf[E]
  legacyIdOf(row: Record<string, unknown>): string
}
