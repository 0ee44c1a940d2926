/**
 * The chat interface's writes on one member (cometchat/docs `chat-apis.json`):
 * `PUT /groups/{guid}/members/{uid}` `{scope}` (change-group-member-scope → `{guid, uid, scope,
 * joinedAt}`), `DELETE /groups/{guid}/members/{uid}` (kick-group-member), `POST` and `DELETE
 * /groups/{guid}/bannedusers/{uid}` (ban-group-user, unban-group-user; no body, documented), each
 * answering `{success, message}` with the documented texts. Codes (`articles/error-guide.mdx`):
 * `ERR_GUID_NOT_FOUND`, `ERR_UID_NOT_FOUND` (also a deactivated user), `ERR_NOT_A_MEMBER`,
 * `ERR_SAME_SCOPE`, `ERR_ALREADY_BANNED`, `ERR_NOT_A_BANNED_USER`; their HTTP status (400) is
 * assumed. Assumed: a banned user is not a member (kick, scope → `ERR_NOT_A_MEMBER`); a user who is
 * not a member can be banned (as `usersToBan` allows); an unbanned user is not a member again.
 * Webhooks `group_member_scope_changed`, `_kicked`, `_banned`, `_unbanned`: `{group, members, by}`.
 * The add call is `member-add-route.ts`.
 */
import { ChangeScopeRequest } from '../target/chat-write-schemas.ts'
import { memberKey } from '../target/schemas.ts'
import type { WebhookTrigger } from '../target/webhooks.ts'
import { activeUser, existingGroup, type GroupRow, memberCount, type MemberRow, memberRow, type UserRow } from './chat-lookups.ts'
import { type ChatWrite, type ChatWriteSpec, idParam, writeBody } from './chat-write-route.ts'
import { HttpError, type RequestContext } from './http-kit.ts'
import { APP_SYSTEM, memberAddSpec } from './member-add-route.ts'
import { groupObject, userObject } from './representations.ts'
import type { SandboxServices } from './sandbox-services.ts'

interface Target {
  readonly group: GroupRow
  readonly user: UserRow
  readonly row: MemberRow | undefined
  readonly key: string
}

async function target(services: SandboxServices, ctx: RequestContext, w: ChatWrite): Promise<Target> {
  const guid = idParam(ctx, 'guid')
  const uid = idParam(ctx, 'uid')
  const group = await existingGroup(services.db, w.app.id, guid)
  const user = await activeUser(services.db, w.app.id, uid)
  return { group, user, row: await memberRow(services.db, w.app.id, guid, uid), key: memberKey(guid, uid) }
}

function conflict(code: string, message: string): HttpError {
  return new HttpError(400, code, message)
}

function notAMember(t: Target): HttpError {
  return conflict('ERR_NOT_A_MEMBER', `The user ${t.user.uid} is not a member of the group ${t.group.guid}.`)
}

async function done(services: SandboxServices, w: ChatWrite, t: Target, trigger: WebhookTrigger, scope: string, extra: Record<string, unknown> = {}) {
  w.items.push({ key: t.key, result: 'applied' })
  const group = groupObject(t.group, await memberCount(services.db, w.app.id, t.group.guid))
  w.events.push({ trigger, data: { group, members: { [t.user.uid]: { ...userObject(t.user), scope } }, by: APP_SYSTEM, ...extra } })
}

function members(services: SandboxServices, w: ChatWrite, t: Target) {
  return services.db.updateTable('members').where('app_id', '=', w.app.id).where('guid', '=', t.group.guid).where('uid', '=', t.user.uid)
}

async function changeScope(services: SandboxServices, ctx: RequestContext, w: ChatWrite) {
  const { scope } = writeBody(ctx, ChangeScopeRequest)
  const t = await target(services, ctx, w)
  if (!t.row || t.row.is_banned) {
    throw notAMember(t)
  }
  if (t.row.scope === scope) {
    throw conflict('ERR_SAME_SCOPE', `The user ${t.user.uid} already has the scope ${scope}.`)
  }
  await members(services, w, t).set({ scope }).execute()
  await done(services, w, t, 'group_member_scope_changed', scope, { oldScope: t.row.scope })
  return { status: 200, body: { data: { guid: t.group.guid, uid: t.user.uid, scope, joinedAt: Number(t.row.joined_at) } } }
}

function deleteRow(services: SandboxServices, w: ChatWrite, t: Target) {
  return services.db.deleteFrom('members').where('app_id', '=', w.app.id).where('guid', '=', t.group.guid).where('uid', '=', t.user.uid).execute()
}

async function kick(services: SandboxServices, ctx: RequestContext, w: ChatWrite) {
  const t = await target(services, ctx, w)
  if (!t.row || t.row.is_banned) {
    throw notAMember(t)
  }
  await deleteRow(services, w, t)
  await done(services, w, t, 'group_member_kicked', t.row.scope)
  const message = `The member with ${t.user.uid} has been kicked from the Group with ${t.group.guid}.`
  return { status: 200, body: { data: { success: true, message } } }
}

async function ban(services: SandboxServices, ctx: RequestContext, w: ChatWrite) {
  const t = await target(services, ctx, w)
  if (t.row?.is_banned) {
    throw conflict('ERR_ALREADY_BANNED', `The user ${t.user.uid} is already banned from the group ${t.group.guid}.`)
  }
  if (t.row) {
    await members(services, w, t).set({ is_banned: true }).execute()
  } else {
    await services.db
      .insertInto('members')
      .values({
        app_id: w.app.id,
        guid: t.group.guid,
        uid: t.user.uid,
        scope: 'participant',
        is_banned: true,
        joined_at: w.nowSeconds,
        created_at: w.nowSeconds,
      })
      .execute()
  }
  await done(services, w, t, 'group_member_banned', t.row?.scope ?? 'participant')
  const message = `The user with uid ${t.user.uid} has been banned from the Group with ${t.group.guid}.`
  return { status: 200, body: { data: { success: true, message } } }
}

async function unban(services: SandboxServices, ctx: RequestContext, w: ChatWrite) {
  const t = await target(services, ctx, w)
  if (!t.row?.is_banned) {
    throw conflict('ERR_NOT_A_BANNED_USER', `The user ${t.user.uid} is not banned from the group ${t.group.guid}.`)
  }
  await deleteRow(services, w, t)
  await done(services, w, t, 'group_member_unbanned', t.row.scope)
  const message = `The user with uid ${t.user.uid} has been unbanned from the Group with ${t.group.guid}.`
  return { status: 200, body: { data: { success: true, message } } }
}

export function memberWriteSpecs(services: SandboxServices): ChatWriteSpec[] {
  const keysOf = (ctx: RequestContext) => [memberKey(idParam(ctx, 'guid'), idParam(ctx, 'uid'))]
  const one = 'groups/:guid/members/:uid'
  const banned = 'groups/:guid/bannedusers/:uid'
  return [
    memberAddSpec(services),
    { method: 'PUT', path: one, endpoint: 'members.scope', keysOf, handler: (ctx, w) => changeScope(services, ctx, w) },
    { method: 'DELETE', path: one, endpoint: 'members.kick', keysOf, handler: (ctx, w) => kick(services, ctx, w) },
    { method: 'POST', path: banned, endpoint: 'members.ban', keysOf, handler: (ctx, w) => ban(services, ctx, w) },
    { method: 'DELETE', path: banned, endpoint: 'members.unban', keysOf, handler: (ctx, w) => unban(services, ctx, w) },
  ]
}
