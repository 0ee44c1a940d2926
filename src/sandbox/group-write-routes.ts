/**
 * The chat interface's group writes (cometchat/docs `chat-apis.json`): `PUT /groups/{guid}`
 * (update-group: name, type, password, icon, description, metadata, owner, tags, `unset` of icon,
 * description, metadata; optional `onBehalfOf`, with which `owner` is ignored — documented) and
 * `DELETE /groups/{guid}` (delete-group → `{success, message}`; the group's members and messages go
 * with it). A `password` type without a password → `ERR_EMPTY_GROUP_PASS` (documented code); a
 * group leaving the `password` type loses its password. With `onBehalfOf` the caller must be the
 * owner or an admin (`ERR_GROUP_NO_ADMIN_SCOPE`, documented code; status 403 assumed). Webhooks:
 * `group_updated` (and `group_owner_transferred` when the owner changes) and `group_deleted`, with
 * `{group}` (documented triggers and example shape).
 */
import { GroupUpdate } from '../target/chat-write-schemas.ts'
import { activeUser, existingGroup, type GroupRow, memberCount, memberRow } from './chat-lookups.ts'
import { type ChatWrite, type ChatWriteSpec, idParam, onBehalfOfHeader, writeBody } from './chat-write-route.ts'
import { HttpError, isPlainObject, jsonBody, type RequestContext } from './http-kit.ts'
import { APP_SYSTEM } from './member-add-route.ts'
import { groupObject } from './representations.ts'
import type { SandboxServices } from './sandbox-services.ts'
import { toJson } from './sandbox-store.ts'

/** The owner, or an admin member, may act for the group. */
async function requireAdmin(services: SandboxServices, w: ChatWrite, group: GroupRow, uid: string): Promise<void> {
  await activeUser(services.db, w.app.id, uid)
  if (group.owner === uid) {
    return
  }
  const m = await memberRow(services.db, w.app.id, group.guid, uid)
  if (!m || m.is_banned || m.scope !== 'admin') {
    throw new HttpError(403, 'ERR_GROUP_NO_ADMIN_SCOPE', `The user ${uid} does not have admin scope in the group ${group.guid}.`)
  }
}

async function updateGroup(services: SandboxServices, ctx: RequestContext, w: ChatWrite) {
  const guid = idParam(ctx, 'guid')
  const raw = jsonBody(ctx)
  if (isPlainObject(raw) && raw.type === 'password' && (raw.password === undefined || raw.password === '')) {
    throw new HttpError(400, 'ERR_EMPTY_GROUP_PASS', 'A password group needs a password.', { details: { password: ['required for type password'] } })
  }
  const body = writeBody(ctx, GroupUpdate)
  const group = await existingGroup(services.db, w.app.id, guid)
  const actor = onBehalfOfHeader(ctx)
  if (actor !== undefined) {
    await requireAdmin(services, w, group, actor)
  }
  const owner = actor === undefined ? body.owner : undefined
  if (owner !== undefined) {
    await activeUser(services.db, w.app.id, owner)
  }
  const unset = new Set(body.unset ?? [])
  const type = body.type ?? group.type
  const row = await services.db
    .updateTable('groups')
    .set({
      ...(body.name !== undefined ? { name: body.name } : {}),
      type,
      password: type === 'password' ? (body.password ?? group.password) : null,
      ...(body.icon !== undefined ? { icon: body.icon } : unset.has('icon') ? { icon: null } : {}),
      ...(body.description !== undefined ? { description: body.description } : unset.has('description') ? { description: null } : {}),
      ...(body.metadata !== undefined ? { metadata: toJson(body.metadata) } : unset.has('metadata') ? { metadata: null } : {}),
      ...(body.tags !== undefined ? { tags: toJson(body.tags) } : {}),
      ...(owner !== undefined ? { owner } : {}),
      updated_at: w.nowSeconds,
    })
    .where('app_id', '=', w.app.id)
    .where('guid', '=', guid)
    .returningAll()
    .executeTakeFirstOrThrow()
  const data = groupObject(row, await memberCount(services.db, w.app.id, guid))
  w.items.push({ key: guid, result: 'applied' })
  // Documented: group_updated's group carries updatedAt and updatedBy; owner_transferred's the previous owner as oldOwner.
  const updatedBy = actor ?? APP_SYSTEM.uid
  w.events.push({ trigger: 'group_updated', data: { group: { ...data, updatedBy } } })
  if (owner !== undefined && owner !== group.owner) {
    w.events.push({ trigger: 'group_owner_transferred', data: { group: { ...data, updatedBy, oldOwner: group.owner } } })
  }
  return { status: 200, body: { data } }
}

async function deleteGroup(services: SandboxServices, ctx: RequestContext, w: ChatWrite) {
  const guid = idParam(ctx, 'guid')
  const group = await existingGroup(services.db, w.app.id, guid)
  const data = groupObject(group, await memberCount(services.db, w.app.id, guid))
  await services.db.transaction().execute(async (tx) => {
    await tx.deleteFrom('messages').where('app_id', '=', w.app.id).where('conversation_id', '=', `group_${guid}`).execute()
    await tx.deleteFrom('members').where('app_id', '=', w.app.id).where('guid', '=', guid).execute()
    await tx.deleteFrom('groups').where('app_id', '=', w.app.id).where('guid', '=', guid).execute()
  })
  w.items.push({ key: guid, result: 'applied' })
  w.events.push({ trigger: 'group_deleted', data: { group: data } })
  return { status: 200, body: { data: { success: true, message: `Group with guid ${guid} has been deleted successfully.` } } }
}

export function groupWriteSpecs(services: SandboxServices): ChatWriteSpec[] {
  const keysOf = (ctx: RequestContext) => [idParam(ctx, 'guid')]
  return [
    { method: 'PUT', path: 'groups/:guid', endpoint: 'groups.update', keysOf, handler: (ctx, w) => updateGroup(services, ctx, w) },
    { method: 'DELETE', path: 'groups/:guid', endpoint: 'groups.delete', keysOf, handler: (ctx, w) => deleteGroup(services, ctx, w) },
  ]
}
