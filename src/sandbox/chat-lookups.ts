/**
 * The lookups the chat write routes share, each answering the documented "not found" code
 * (`articles/error-guide.mdx`): a user that does not exist *or is deactivated* →
 * `ERR_UID_NOT_FOUND`; a group → `ERR_GUID_NOT_FOUND`; a message → `ERR_MESSAGE_ID_NOT_FOUND`.
 * HTTP 404 for all three (assumed: no status is published).
 */
import type { Selectable } from 'kysely'

import { HttpError } from './http-kit.ts'
import type { GroupsTable, MembersTable, MessagesTable, SandboxDb, UsersTable } from './sandbox-store.ts'

export type UserRow = Selectable<UsersTable>
export type GroupRow = Selectable<GroupsTable>
export type MemberRow = Selectable<MembersTable>
export type MessageRow = Selectable<MessagesTable>

/** An active user, or 404 `ERR_UID_NOT_FOUND`. */
export async function activeUser(db: SandboxDb, appId: string, uid: string): Promise<UserRow> {
  const row = await db.selectFrom('users').selectAll().where('app_id', '=', appId).where('uid', '=', uid).executeTakeFirst()
  if (!row || row.deactivated_at !== null) {
    throw new HttpError(404, 'ERR_UID_NOT_FOUND', `The user ${uid} does not exist or is deactivated.`)
  }
  return row
}

/** The group, or 404 `ERR_GUID_NOT_FOUND`. */
export async function existingGroup(db: SandboxDb, appId: string, guid: string): Promise<GroupRow> {
  const row = await db.selectFrom('groups').selectAll().where('app_id', '=', appId).where('guid', '=', guid).executeTakeFirst()
  if (!row) {
    throw new HttpError(404, 'ERR_GUID_NOT_FOUND', `The group ${guid} does not exist.`)
  }
  return row
}

/** The member row of `uid` in the group (banned ones too), if any. */
export async function memberRow(db: SandboxDb, appId: string, guid: string, uid: string): Promise<MemberRow | undefined> {
  return db.selectFrom('members').selectAll().where('app_id', '=', appId).where('guid', '=', guid).where('uid', '=', uid).executeTakeFirst()
}

/** Members of the group that are not banned. */
export async function memberCount(db: SandboxDb, appId: string, guid: string): Promise<number> {
  const r = await db
    .selectFrom('members')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('app_id', '=', appId)
    .where('guid', '=', guid)
    .where('is_banned', '=', false)
    .executeTakeFirstOrThrow()
  return Number(r.n)
}

/** The message with this platform id, or 404 `ERR_MESSAGE_ID_NOT_FOUND`. */
export async function existingMessage(db: SandboxDb, appId: string, rawId: string): Promise<MessageRow> {
  const row = /^\d{1,18}$/.test(rawId)
    ? await db.selectFrom('messages').selectAll().where('app_id', '=', appId).where('id', '=', Number(rawId)).executeTakeFirst()
    : undefined
  if (!row) {
    throw new HttpError(404, 'ERR_MESSAGE_ID_NOT_FOUND', `The message ${rawId} does not exist.`)
  }
  return row
}
