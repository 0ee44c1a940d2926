/**
 * The canonical legacy model: what every connector produces, whatever the legacy system, and what
 * every mapping consumes. It holds every field a source can fill and the platform can use
 * (see the import fields in shared/docs/target-platform-facts.md §1).
 *
 * Timestamps: one representation everywhere, **epoch milliseconds** (a `number`), UTC. Connectors
 * convert whatever their database stores; mappings turn them into the platform's seconds.
 * Ids: the legacy system's own ids, as strings, untouched; the id policy in `mappings/` derives the
 * platform ids from them.
 */

import type { FileLocator } from './files.ts'

/** Epoch milliseconds, UTC. */
export type EpochMs = number

/** The four things that are migrated, in the order they must be loaded. */
export const LEGACY_ENTITIES = ['users', 'groups', 'members', 'messages'] as const
export type LegacyEntity = (typeof LEGACY_ENTITIES)[number]

export type JsonObject = { [key: string]: unknown }

export interface LegacyUser {
  readonly id: string
  /** Display name; a connector falls back to the username when the legacy display name is empty. */
  readonly name: string
  readonly username?: string
  readonly email?: string
  /** URL of the avatar image. */
  readonly avatar?: string
  /** URL of a profile page. */
  readonly profileUrl?: string
  /** A role id on the platform (it must exist there). */
  readonly role?: string
  readonly metadata?: JsonObject
  readonly tags?: readonly string[]
  readonly createdAt?: EpochMs
  readonly lastActiveAt?: EpochMs
  /** Set for deactivated, soft-deleted or blocked users. */
  readonly deactivatedAt?: EpochMs
  readonly isBot: boolean
  /** When the row last changed, for delta runs. */
  readonly updatedAt?: EpochMs
}

export const GROUP_KINDS = ['public', 'private', 'password'] as const
export type LegacyGroupType = (typeof GROUP_KINDS)[number]

export interface LegacyGroup {
  readonly id: string
  readonly name: string
  readonly type: LegacyGroupType
  readonly password?: string
  /** Legacy id of the owner. */
  readonly ownerId?: string
  readonly icon?: string
  readonly description?: string
  readonly metadata?: JsonObject
  readonly tags?: readonly string[]
  readonly createdAt?: EpochMs
  /** Archived / deleted in the legacy system (it still holds history). */
  readonly archivedAt?: EpochMs
  readonly updatedAt?: EpochMs
}

export const MEMBER_ROLES = ['admin', 'moderator', 'participant'] as const
export type LegacyMemberScope = (typeof MEMBER_ROLES)[number]

export interface LegacyMember {
  readonly groupId: string
  readonly userId: string
  readonly scope: LegacyMemberScope
  readonly banned: boolean
  readonly joinedAt?: EpochMs
  readonly updatedAt?: EpochMs
}

export const MESSAGE_KINDS = ['text', 'image', 'audio', 'video', 'file', 'custom'] as const
export type LegacyMessageType = (typeof MESSAGE_KINDS)[number]

export interface LegacyAttachment {
  readonly url: string
  readonly name: string
  readonly mimeType?: string
  readonly extension?: string
  /** Bytes. */
  readonly size?: number
  /** Where the files lane reads the bytes (`src/model/files.ts`); absent: over HTTP from `url`. */
  readonly source?: FileLocator
}

export interface LegacyReaction {
  readonly emoji: string
  readonly userId: string
  readonly at?: EpochMs
}

export interface LegacyMessage {
  readonly id: string
  readonly senderId: string
  readonly receiverType: 'user' | 'group'
  /** A legacy user id (one-to-one) or group id. */
  readonly receiverId: string
  readonly type: LegacyMessageType
  readonly text?: string
  readonly attachments?: readonly LegacyAttachment[]
  /** For `custom` messages. */
  readonly customData?: JsonObject
  readonly metadata?: JsonObject
  readonly sentAt: EpochMs
  readonly editedAt?: EpochMs
  /** Soft-deleted in the legacy system. */
  readonly deletedAt?: EpochMs
  /** Legacy id of the thread's root message, for replies. */
  readonly threadParentId?: string
  readonly reactions?: readonly LegacyReaction[]
  /** Legacy user ids mentioned in the text. */
  readonly mentions?: readonly string[]
  /**
   * How each mention is written in the text (the handle after `@`, lowercase) → the legacy user id
   * it names, so a mapping can rewrite `@alice` into the platform's mention syntax.
   */
  readonly mentionHandles?: Readonly<Record<string, string>>
  readonly deliveredAt?: EpochMs
  readonly readAt?: EpochMs
  /** Set for system messages (joins, leaves, header changes…): the legacy system's kind. */
  readonly systemKind?: string
  readonly updatedAt?: EpochMs
}

export interface LegacyRecordOf {
  users: LegacyUser
  groups: LegacyGroup
  members: LegacyMember
  messages: LegacyMessage
}

/** The legacy id of a record, as reports and the ledger name it. Members: `<groupId>/<userId>`. */
export function legacyIdOf<E extends LegacyEntity>(entity: E, record: LegacyRecordOf[E]): string {
  if (entity === 'members') {
    const m = record as LegacyMember
    return `${m.groupId}/${m.userId}`
  }
  return (record as LegacyUser | LegacyGroup | LegacyMessage).id
}
