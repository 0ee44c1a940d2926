/**
 * What the comparison of a changed item works with: the payloads, the policies and the update
 * intents it returns. Shared by `changeIntents` (change-intents.ts), the entities' comparisons it
 * calls (user-, group-, member-, message-changes.ts) and their helpers (change-fields.ts).
 */
import type { UpdateKind, UpdatePolicy } from '../state/index.ts'
import type { ChangesConfig } from './changes-config.ts'

/** One update intent of an item, before the ledger adds its legacy id, target key and hash. */
export interface ChangeIntent {
  readonly kind: UpdateKind
  /** The call's body (the desired state); for `*.unchangeable`, the new values of the fields. */
  readonly body: Readonly<Record<string, unknown>>
  readonly policy: UpdatePolicy
  readonly reason: string
}

/** What the comparison needs besides the payloads. */
export interface ChangePolicies {
  readonly changes: ChangesConfig
  /** `policies.deletes.mode`: how a soft-deleted message was mapped. */
  readonly deletesMode: 'skip' | 'tombstone'
  /** `policies.legacyMetadata.key`: where chatferry's own metadata sits in a message's `data.metadata`. */
  readonly metadataKey: string
}

/** A payload as stored: the import item's JSON object. */
export type Payload = Readonly<Record<string, unknown>>

/** The record is now refused by a policy: the skip reason the planner gave (`policy:<name>: <why>`). */
export interface NowSkipped {
  readonly skipped: string
}
