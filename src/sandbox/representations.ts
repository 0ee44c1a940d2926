/**
 * How stored rows look on the wire: the user, group, member and message objects of the import
 * echoes, the chat lists and the webhook payloads (documented shapes: facts §1.2–1.5, §5; spec §2.4).
 * Optional fields are left out when empty rather than sent as null.
 */
import type { Selectable } from 'kysely'

import type { GroupsTable, MembersTable, MessagesTable, UsersTable } from './sandbox-store.ts'

type UserRow = Pick<
  Selectable<UsersTable>,
  'uid' | 'name' | 'avatar' | 'link' | 'role' | 'metadata' | 'tags' | 'created_at' | 'updated_at' | 'last_active_at' | 'deactivated_at'
> &
  Partial<Pick<Selectable<UsersTable>, 'status_message'>>
type GroupRow = Pick<Selectable<GroupsTable>, 'guid' | 'name' | 'type' | 'icon' | 'owner' | 'metadata' | 'tags' | 'created_at' | 'updated_at'> &
  Partial<Pick<Selectable<GroupsTable>, 'description'>>
/** The edit and soft-delete columns: absent on rows the import just wrote. */
type EditColumns = 'edited_at' | 'edited_by' | 'deleted_at' | 'deleted_by'
type MessageRow = Omit<Selectable<MessagesTable>, 'app_id' | 'imported_at_ms' | EditColumns> & Partial<Pick<Selectable<MessagesTable>, EditColumns>>

function defined<T extends Record<string, unknown>>(o: T): Partial<T> {
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(o)) {
    if (v !== undefined && v !== null) {
      out[k] = v
    }
  }
  return out as Partial<T>
}

/** The user object. Status is always `offline`: imported users have never connected. */
export function userObject(r: UserRow): Record<string, unknown> {
  return defined({
    uid: r.uid,
    name: r.name,
    avatar: r.avatar,
    link: r.link,
    metadata: r.metadata,
    statusMessage: r.status_message,
    status: 'offline',
    role: r.role,
    tags: r.tags ?? [],
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
    lastActiveAt: r.last_active_at === null ? undefined : Number(r.last_active_at),
    deactivatedAt: r.deactivated_at === null ? undefined : Number(r.deactivated_at),
  })
}

/** The group object; `membersCount` when known. */
export function groupObject(r: GroupRow, membersCount?: number): Record<string, unknown> {
  return defined({
    guid: r.guid,
    name: r.name,
    type: r.type,
    icon: r.icon,
    description: r.description,
    owner: r.owner,
    metadata: r.metadata,
    tags: r.tags ?? [],
    membersCount,
    conversationId: `group_${r.guid}`,
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
  })
}

/** A member as the members list shows it: the user's fields plus scope and joinedAt. */
export function memberObject(m: Pick<Selectable<MembersTable>, 'uid' | 'guid' | 'scope' | 'joined_at' | 'is_banned'>, user: UserRow | undefined) {
  return defined({
    ...(user ? userObject(user) : { uid: m.uid }),
    scope: m.scope,
    joinedAt: Number(m.joined_at),
    isBanned: m.is_banned ? true : undefined,
    conversationId: `group_${m.guid}`,
  })
}

/** Documented: `group_<guid>`, or the two uids joined by `_user_` (sorted, so both directions agree). */
export function conversationIdOf(sender: string, receiverType: string, receiver: string): string {
  if (receiverType === 'group') {
    return `group_${receiver}`
  }
  const [a, b] = [sender, receiver].sort()
  return `${a}_user_${b}`
}

/**
 * The message object of the import echo: the documented list fields plus `muid`, `tags`,
 * `deliveredAt` and `readAt` (the import answer's schema adds the timestamps; its example shows
 * `muid`); the import route adds `data.entities`. The chat lists answer {@link listedMessageObject}.
 */
export function messageObject(r: MessageRow): Record<string, unknown> {
  return defined({
    id: String(r.id),
    muid: r.muid,
    conversationId: r.conversation_id,
    sender: r.sender,
    receiverType: r.receiver_type,
    receiver: r.receiver,
    category: r.category,
    type: r.type,
    data: r.data,
    tags: r.tags ?? undefined,
    sentAt: Number(r.sent_at),
    updatedAt: Number(r.updated_at),
    deliveredAt: r.delivered_at === null ? undefined : Number(r.delivered_at),
    readAt: r.read_at === null ? undefined : Number(r.read_at),
  })
}

/** The sender's and receiver's rows, for a listed message's `data.entities`. */
export interface MessageParties {
  readonly sender: UserRow | undefined
  readonly receiver: UserRow | GroupRow | undefined
}

/**
 * A message as the chat interface lists it (`GET /messages`, `GET /messages/:id`), in the
 * documented shape only (cometchat/docs `chat-apis.json`, `/messages` get, and the `messageSchema`
 * component): `id, conversationId, sender, receiverType, receiver, category, type, data, sentAt,
 * updatedAt`, with `data.entities.sender|receiver` as the published example shows them. No `muid`,
 * `tags`, `deliveredAt` or `readAt`: the published list does not return them, so a client that
 * needs them fails here as it would on the platform.
 */
export function listedMessageObject(r: MessageRow, parties: MessageParties): Record<string, unknown> {
  const entities: Record<string, unknown> = {}
  if (parties.sender !== undefined) {
    entities.sender = entityWrapper(userObject(parties.sender), 'user')
  }
  if (parties.receiver !== undefined) {
    entities.receiver =
      r.receiver_type === 'group'
        ? entityWrapper(groupObject(parties.receiver as GroupRow), 'group')
        : entityWrapper(userObject(parties.receiver as UserRow), 'user')
  }
  return defined({
    id: String(r.id),
    conversationId: r.conversation_id,
    sender: r.sender,
    receiverType: r.receiver_type,
    receiver: r.receiver,
    category: r.category,
    type: r.type,
    data: { ...(r.data as object), entities },
    sentAt: Number(r.sent_at),
    updatedAt: Number(r.updated_at),
    ...editFields(r),
  })
}

/**
 * `editedAt`/`editedBy` of an edited message (documented in the update answer's example) and
 * `deletedAt`/`deletedBy` of a soft-deleted one (documented on the SDK's delete-message pages: "to
 * identify if the message is deleted while iterating through a list of messages").
 */
function editFields(r: MessageRow): Record<string, unknown> {
  return defined({
    editedAt: r.edited_at == null ? undefined : Number(r.edited_at),
    editedBy: r.edited_by ?? undefined,
    deletedAt: r.deleted_at == null ? undefined : Number(r.deleted_at),
    deletedBy: r.deleted_by ?? undefined,
  })
}

/** The entity wrapper of message data and webhook payloads: `{entity, entityType}`. */
export function entityWrapper(entity: Record<string, unknown>, entityType: 'user' | 'group' | 'message'): Record<string, unknown> {
  return { entity, entityType }
}
