/**
 * The chat interface's user writes (cometchat/docs `chat-apis.json`): `PUT /users/{uid}`
 * (update-user: name, avatar, link, role, statusMessage, metadata, tags, `unset` of avatar, link,
 * metadata), `DELETE /users` `{uidsToDeactivate}` (deactivate-users → `{deactivatedUids}`) and
 * `PUT /users` `{uidsToActivate}` (reactivate-users → `{nonDeactivatedUids}`, the example's name).
 * Assumed (README fidelity table): a uid the app does not have refuses the whole call with
 * `ERR_UID_NOT_FOUND` and nothing changes; a uid already in the wanted state is left out of the
 * answer's list (`unchanged` in the request log).
 */
import { z } from 'zod'

import { UserUpdate } from '../target/chat-write-schemas.ts'
import { activeUser } from './chat-lookups.ts'
import { type ChatWrite, type ChatWriteSpec, idParam, writeBody } from './chat-write-route.ts'
import { HttpError, jsonBody, type RequestContext } from './http-kit.ts'
import { userObject } from './representations.ts'
import type { SandboxServices } from './sandbox-services.ts'
import { toJson } from './sandbox-store.ts'

async function updateUser(services: SandboxServices, ctx: RequestContext, w: ChatWrite) {
  const uid = idParam(ctx, 'uid')
  const body = writeBody(ctx, UserUpdate)
  await activeUser(services.db, w.app.id, uid)
  if (body.role !== undefined && body.role !== 'default' && !w.app.settings.roles.includes(body.role)) {
    throw new HttpError(404, 'ERR_ROLE_NOT_FOUND', `The role ${body.role} does not exist.`, { details: { role: ['does not exist'] } })
  }
  const unset = new Set(body.unset ?? [])
  const row = await services.db
    .updateTable('users')
    .set({
      ...(body.name !== undefined ? { name: body.name } : {}),
      ...(body.avatar !== undefined ? { avatar: body.avatar } : unset.has('avatar') ? { avatar: null } : {}),
      ...(body.link !== undefined ? { link: body.link } : unset.has('link') ? { link: null } : {}),
      ...(body.role !== undefined ? { role: body.role } : {}),
      ...(body.statusMessage !== undefined ? { status_message: body.statusMessage } : {}),
      ...(body.metadata !== undefined ? { metadata: toJson(body.metadata) } : unset.has('metadata') ? { metadata: null } : {}),
      ...(body.tags !== undefined ? { tags: toJson(body.tags) } : {}),
      updated_at: w.nowSeconds,
    })
    .where('app_id', '=', w.app.id)
    .where('uid', '=', uid)
    .returningAll()
    .executeTakeFirstOrThrow()
  w.items.push({ key: uid, result: 'applied' })
  return { status: 200, body: { data: userObject(row) } }
}

const UidList = z.array(z.string().min(1)).min(1)

/** The uids of a (de)activation body, lowercased; every one must exist (deactivated or not). */
async function knownUids(services: SandboxServices, w: ChatWrite, ctx: RequestContext, field: 'uidsToDeactivate' | 'uidsToActivate') {
  const body = writeBody(ctx, z.object({ [field]: UidList }).strict())
  const uids = [...new Set((body[field] as string[]).map((u) => u.toLowerCase()))]
  const rows = await services.db
    .selectFrom('users')
    .select(['uid', 'deactivated_at'])
    .where('app_id', '=', w.app.id)
    .where('uid', 'in', uids)
    .execute()
  const found = new Map(rows.map((r) => [r.uid, r.deactivated_at !== null]))
  const unknown = uids.filter((u) => !found.has(u))
  if (unknown.length > 0) {
    throw new HttpError(404, 'ERR_UID_NOT_FOUND', `The users ${unknown.join(', ')} do not exist.`, { details: { [field]: unknown } })
  }
  return { uids, deactivated: found }
}

async function setDeactivated(services: SandboxServices, ctx: RequestContext, w: ChatWrite, deactivate: boolean) {
  const field = deactivate ? 'uidsToDeactivate' : 'uidsToActivate'
  const { uids, deactivated } = await knownUids(services, w, ctx, field)
  const changed = uids.filter((u) => deactivated.get(u) !== deactivate)
  if (changed.length > 0) {
    await services.db
      .updateTable('users')
      .set({ deactivated_at: deactivate ? w.nowSeconds : null, updated_at: w.nowSeconds })
      .where('app_id', '=', w.app.id)
      .where('uid', 'in', changed)
      .execute()
  }
  const done = new Set(changed)
  w.items.push(...uids.map((key) => ({ key, result: done.has(key) ? ('applied' as const) : ('unchanged' as const) })))
  return { status: 200, body: { data: deactivate ? { deactivatedUids: changed } : { nonDeactivatedUids: changed } } }
}

function listedUids(ctx: RequestContext, field: string): string[] {
  const body = jsonBody(ctx) as Record<string, unknown>
  const list = body[field]
  return Array.isArray(list) ? list.filter((u): u is string => typeof u === 'string').map((u) => u.toLowerCase()) : []
}

export function userWriteSpecs(services: SandboxServices): ChatWriteSpec[] {
  return [
    {
      method: 'PUT',
      path: 'users/:uid',
      endpoint: 'users.update',
      keysOf: (ctx) => [idParam(ctx, 'uid')],
      handler: (ctx, w) => updateUser(services, ctx, w),
    },
    {
      method: 'DELETE',
      path: 'users',
      endpoint: 'users.deactivate',
      keysOf: (ctx) => listedUids(ctx, 'uidsToDeactivate'),
      handler: (ctx, w) => setDeactivated(services, ctx, w, true),
    },
    {
      method: 'PUT',
      path: 'users',
      endpoint: 'users.reactivate',
      keysOf: (ctx) => listedUids(ctx, 'uidsToActivate'),
      handler: (ctx, w) => setDeactivated(services, ctx, w, false),
    },
  ]
}
