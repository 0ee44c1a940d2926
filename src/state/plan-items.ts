/**
 * What the planner hands the ledger and gets back: the items it wants loaded (with a message's
 * files), skipped and rejected, and what one planning call counted. `LedgerStore.planPage`
 * (store.ts) takes them, and its SQL (`sql/upsert-*-items.ts`, `sql/upsert-planned-files.ts`) and
 * the changed-item classification (changed-items.ts) read them, without importing store.ts.
 */
import type { FileLocator } from '../model/files.ts'

/** One item the planner wants loaded. */
export interface PlannedItem {
  /** The legacy system's id of the record (for reports). */
  readonly legacyId: string
  /** The deterministic platform key: uid, guid, `<guid>_member_<uid>` or muid. */
  readonly targetKey: string
  /** The import item, exactly as it will be sent (an object, or its JSON text). */
  readonly payload: unknown
  /** Drain order within the entity, ascending. A message's is its payload's `sentAt` (oldest first), written by the ledger itself (`ledgerSortKey`). @default 0 */
  readonly sortKey?: number
  /**
   * A message's files in the order of its attachments (`files.mode: rehost`): recorded in
   * `chatferry.files` and linked to the item in the page's transaction; the message waits for them.
   */
  readonly files?: readonly PlannedFile[]
}

/** One file of a planned message: where its bytes are and what the legacy record says of it. */
export interface PlannedFile {
  readonly locator: FileLocator
  /** The attachment's URL in the payload (the legacy URL). */
  readonly url: string
  readonly name: string
  readonly size?: number
  readonly type?: string
}

/** An item refused before sending by policy (deleted user, system message, …). */
export interface SkippedItem {
  readonly legacyId: string
  /** @default `~legacy:<legacyId>` (an item skipped before it got a key) */
  readonly targetKey?: string
  /** Why, e.g. `policy:deleted-user`. */
  readonly reason: string
}

/** An item refused before sending as invalid (a mapping reject); kept in quarantine with code and reason. */
export interface RejectedItem {
  readonly legacyId: string
  /** @default `~legacy:<legacyId>` */
  readonly targetKey?: string
  /** e.g. `MAPPING_INVALID`. */
  readonly code: string
  readonly message: string
  /** The payload that was refused, if there is one (kept so a fix can be checked). */
  readonly payload?: unknown
}

/** What one planning call did. */
export interface PlanCounts {
  /** New items, now `planned`: the rows this call inserted (a concurrent planner's inserts are not counted here). */
  inserted: number
  /** Known items whose payload changed before they were loaded (updated in place). */
  updated: number
  /** Known items whose payload was the same: untouched. */
  unchanged: number
  /** Items already loaded whose source changed since: recorded (`loaded_hash` ≠ `payload_hash`), never resent automatically. */
  loadedButChanged: number
  /** Rejected or skipped items that came back with a new payload: planned again. */
  replanned: number
  skipped: number
  rejected: number
  /** Items that appeared twice in one call (the last one won). */
  duplicates: number
}
