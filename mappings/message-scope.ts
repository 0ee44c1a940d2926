/**
 * What the policy sections of `mapMessage` share while one legacy message is mapped, and what the
 * message says once they have decided it (`MessageContent`: `message-content.ts`, or a tombstone
 * from `message-deletes.ts`). @internal
 */
import type { JsonObject, LegacyMessage } from '../src/model/index.ts'
import type { Attachment } from '../src/target/schemas.ts'
import type { Outcomes } from './common.ts'
import type { MappingContext } from './types.ts'

export interface MessageScope {
  /** The legacy message, its strings already cleaned (`text.invalidCharacters`). */
  readonly record: LegacyMessage
  readonly ctx: MappingContext
  /** The outcomes counted so far, in the order the policies are applied. */
  readonly out: Outcomes
  /**
   * chatferry's own metadata (`data.metadata[legacyMetadata.key]`). The sections add to it in the
   * order mapMessage calls them, which is the order of its keys in the payload.
   */
  readonly own: JsonObject
  /** Deleted in the source (`deletedAt` set): see `message-deletes.ts`. */
  readonly deleted: boolean
  /** A system message (`systemKind` set): see `message-system.ts`. */
  readonly system: boolean
  /** A thread reply (`threadParentId` set): see `message-threads.ts`. */
  readonly reply: boolean
}

export function messageScope(record: LegacyMessage, ctx: MappingContext, out: Outcomes): MessageScope {
  const own: JsonObject = {}
  if (ctx.policies.legacyMetadata.ids) {
    own.id = record.id
  }
  return {
    record,
    ctx,
    out,
    own,
    deleted: record.deletedAt !== undefined && record.deletedAt !== null,
    system: record.systemKind !== undefined && record.systemKind !== null && record.systemKind !== '',
    reply: record.threadParentId !== undefined && record.threadParentId !== null && record.threadParentId !== '',
  }
}

/** What a message says: its text, attachments, custom data, type and category. */
export interface MessageContent {
  readonly text: string
  readonly attachments: Attachment[]
  readonly customData: JsonObject | undefined
  readonly type: string
  readonly category: 'message' | 'custom'
}
