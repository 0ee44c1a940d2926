/**
 * The chat interface's read endpoints used to check an import (documented: facts §5):
 * page-numbered `GET users`, `groups`, `groups/:guid/members` (perPage default 100, max 1000;
 * page default 1; stable creation order) and cursor-paged `GET messages` (limit 1–1000, default
 * 10; affix/id/sentAt), answered in the published shape (no `muid`: `listedMessageObject`). Messages are paged with keyset queries on (sent_at, id) indexes, never
 * OFFSET, so deep pages of millions of rows stay fast. Filters that are documented but not listed
 * here are ignored.
 */
import { type Selectable, sql } from 'kysely'

import { chatCaller } from './chat-caller.ts'
import { boolParam, enumParam, HttpError, intParam, optionalIntParam, type Reply, type RequestContext } from './http-kit.ts'
import { groupObject, listedMessageObject, memberObject, userObject } from './representations.ts'
import type { Route } from './router.ts'
import { API_VERSIONS, type SandboxServices } from './sandbox-services.ts'
import type { MessagesTable } from './sandbox-store.ts'

const PER_PAGE_DEFAULT = 100
const PER_PAGE_MAX = 1000
const LIMIT_DEFAULT = 10
const LIMIT_MAX = 1000
const MAX_TIMESTAMP = 9_999_999_999

function pagination(total: number, count: number, perPage: number, page: number) {
  return { total, count, per_page: perPage, current_page: page, total_pages: Math.ceil(total / perPage) }
}

function pageParams(ctx: RequestContext): { perPage: number; page: number } {
  return {
    perPage: intParam(ctx.query, 'perPage', PER_PAGE_DEFAULT, 1, PER_PAGE_MAX),
    page: intParam(ctx.query, 'page', 1, 1, 10_000_000),
  }
}

/** Escapes LIKE wildcards so searchKey is a plain prefix. */
function likePrefix(s: string): string {
  return `${s.replace(/[\\%_]/g, (c) => `\\${c}`)}%`
}

async function listUsers(services: SandboxServices, ctx: RequestContext): Promise<Reply> {
  const { app, headers } = chatCaller(services, ctx)
  const { perPage, page } = pageParams(ctx)
  const searchKey = ctx.query.get('searchKey')
  // Documented: deactivated users are listed only with withDeactivated / onlyDeactivated.
  const only = boolParam(ctx.query, 'onlyDeactivated')
  const withDeactivated = only || boolParam(ctx.query, 'withDeactivated')
  let q = services.db.selectFrom('users').where('app_id', '=', app.id)
  if (only) {
    q = q.where('deactivated_at', 'is not', null)
  } else if (!withDeactivated) {
    q = q.where('deactivated_at', 'is', null)
  }
  if (searchKey) {
    q = q.where((eb) => eb.or([eb('uid', 'ilike', likePrefix(searchKey)), eb('name', 'ilike', likePrefix(searchKey))]))
  }
  const [count, rows] = await Promise.all([
    q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    q
      .selectAll()
      .orderBy('seq')
      .limit(perPage)
      .offset((page - 1) * perPage)
      .execute(),
  ])
  return { status: 200, headers, body: { data: rows.map(userObject), meta: { pagination: pagination(Number(count.n), rows.length, perPage, page) } } }
}

async function getUser(services: SandboxServices, ctx: RequestContext): Promise<Reply> {
  const { app, headers } = chatCaller(services, ctx)
  const uid = (ctx.params.uid ?? '').toLowerCase()
  const row = await services.db.selectFrom('users').selectAll().where('app_id', '=', app.id).where('uid', '=', uid).executeTakeFirst()
  // Documented: ERR_UID_NOT_FOUND is also the answer for a deactivated user.
  if (!row || row.deactivated_at !== null) {
    throw new HttpError(404, 'ERR_UID_NOT_FOUND', `The user ${uid} does not exist.`, { headers })
  }
  return { status: 200, headers, body: { data: userObject(row) } }
}

function groupsWithCount(services: SandboxServices, appId: string) {
  return services.db
    .selectFrom('groups as g')
    .where('g.app_id', '=', appId)
    .selectAll('g')
    .select((eb) =>
      eb
        .selectFrom('members as m')
        .select((e) => e.fn.countAll<number>().as('c'))
        .whereRef('m.app_id', '=', 'g.app_id')
        .whereRef('m.guid', '=', 'g.guid')
        .where('m.is_banned', '=', false)
        .as('members_count'),
    )
}

async function listGroups(services: SandboxServices, ctx: RequestContext): Promise<Reply> {
  const { app, headers } = chatCaller(services, ctx)
  const { perPage, page } = pageParams(ctx)
  const searchKey = ctx.query.get('searchKey')
  const type = enumParam(ctx.query, 'type', ['public', 'private', 'password'] as const)
  let count = services.db.selectFrom('groups as g').where('g.app_id', '=', app.id)
  let rows = groupsWithCount(services, app.id)
  if (searchKey) {
    count = count.where((eb) => eb.or([eb('g.guid', 'ilike', likePrefix(searchKey)), eb('g.name', 'ilike', likePrefix(searchKey))]))
    rows = rows.where((eb) => eb.or([eb('g.guid', 'ilike', likePrefix(searchKey)), eb('g.name', 'ilike', likePrefix(searchKey))]))
  }
  if (type) {
    count = count.where('g.type', '=', type)
    rows = rows.where('g.type', '=', type)
  }
  const [total, list] = await Promise.all([
    count.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    rows
      .orderBy('g.seq')
      .limit(perPage)
      .offset((page - 1) * perPage)
      .execute(),
  ])
  return {
    status: 200,
    headers,
    body: {
      data: list.map((r) => groupObject(r, Number(r.members_count ?? 0))),
      meta: { pagination: pagination(Number(total.n), list.length, perPage, page) },
    },
  }
}

async function getGroup(services: SandboxServices, ctx: RequestContext): Promise<Reply> {
  const { app, headers } = chatCaller(services, ctx)
  const guid = (ctx.params.guid ?? '').toLowerCase()
  const row = await groupsWithCount(services, app.id).where('g.guid', '=', guid).executeTakeFirst()
  if (!row) {
    throw new HttpError(404, 'ERR_GUID_NOT_FOUND', `The group ${guid} does not exist.`, { headers })
  }
  return { status: 200, headers, body: { data: groupObject(row, Number(row.members_count ?? 0)) } }
}

async function listMembers(services: SandboxServices, ctx: RequestContext, banned: boolean): Promise<Reply> {
  const { app, headers } = chatCaller(services, ctx)
  const { perPage, page } = pageParams(ctx)
  const guid = (ctx.params.guid ?? '').toLowerCase()
  const group = await services.db.selectFrom('groups').select('guid').where('app_id', '=', app.id).where('guid', '=', guid).executeTakeFirst()
  if (!group) {
    throw new HttpError(404, 'ERR_GUID_NOT_FOUND', `The group ${guid} does not exist.`, { headers })
  }
  const scope = enumParam(ctx.query, 'scope', ['admin', 'moderator', 'participant'] as const)
  let base = services.db.selectFrom('members as m').where('m.app_id', '=', app.id).where('m.guid', '=', guid).where('m.is_banned', '=', banned)
  if (scope) {
    base = base.where('m.scope', '=', scope)
  }
  const [total, rows] = await Promise.all([
    base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    base
      .leftJoin('users as u', (j) => j.onRef('u.app_id', '=', 'm.app_id').onRef('u.uid', '=', 'm.uid'))
      .select([
        'm.uid',
        'm.guid',
        'm.scope',
        'm.joined_at',
        'm.is_banned',
        'u.uid as user_uid',
        'u.name',
        'u.avatar',
        'u.link',
        'u.role',
        'u.metadata',
        'u.tags',
        'u.created_at',
        'u.updated_at',
        'u.last_active_at',
        'u.deactivated_at',
      ])
      .orderBy('m.seq')
      .limit(perPage)
      .offset((page - 1) * perPage)
      .execute(),
  ])
  const data = rows.map((r) =>
    memberObject(
      r,
      r.user_uid === null
        ? undefined
        : {
            uid: r.uid,
            name: r.name ?? r.uid,
            avatar: r.avatar,
            link: r.link,
            role: r.role ?? 'default',
            metadata: r.metadata,
            tags: r.tags,
            created_at: r.created_at ?? 0,
            updated_at: r.updated_at ?? 0,
            last_active_at: r.last_active_at,
            deactivated_at: r.deactivated_at,
          },
    ),
  )
  return { status: 200, headers, body: { data, meta: { pagination: pagination(Number(total.n), rows.length, perPage, page) } } }
}

async function listMessages(services: SandboxServices, ctx: RequestContext): Promise<Reply> {
  const { app, headers } = chatCaller(services, ctx)
  const q = ctx.query
  const limit = intParam(q, 'limit', LIMIT_DEFAULT, 1, LIMIT_MAX)
  // Not documented: the default direction. The sandbox starts at the oldest message (append).
  const affix = enumParam(q, 'affix', ['append', 'prepend'] as const) ?? 'append'
  const idRaw = q.get('id')
  if (idRaw !== null && idRaw !== '' && !/^\d{1,18}$/.test(idRaw)) {
    throw new HttpError(400, 'ERR_BAD_REQUEST', `The parameter id must be a message id, got ${JSON.stringify(idRaw)}.`, {
      details: { id: ['must be a message id'] },
      headers,
    })
  }
  const cursorId = idRaw === null || idRaw === '' ? undefined : Number(idRaw)
  let cursorSentAt = optionalIntParam(q, 'sentAt', 0, MAX_TIMESTAMP)
  const receiverType = enumParam(q, 'receiverType', ['user', 'group'] as const)
  const conversationId = q.get('conversationId')
  const sender = q.get('sender')?.toLowerCase()
  const from = optionalIntParam(q, 'fromTimestamp', 0, MAX_TIMESTAMP)
  const to = optionalIntParam(q, 'toTimestamp', 0, MAX_TIMESTAMP)
  const category = q.get('category')
  const type = q.get('type')

  if (cursorId !== undefined && cursorSentAt === undefined) {
    const at = await services.db.selectFrom('messages').select('sent_at').where('app_id', '=', app.id).where('id', '=', cursorId).executeTakeFirst()
    if (!at) {
      throw new HttpError(404, 'ERR_MESSAGE_ID_NOT_FOUND', `The message ${cursorId} does not exist.`, { headers })
    }
    cursorSentAt = Number(at.sent_at)
  }
  let query = services.db.selectFrom('messages').selectAll().where('app_id', '=', app.id)
  if (receiverType) {
    query = query.where('receiver_type', '=', receiverType)
  }
  if (conversationId) {
    query = query.where('conversation_id', '=', conversationId)
  }
  if (sender) {
    query = query.where('sender', '=', sender)
  }
  if (category) {
    query = query.where('category', '=', category)
  }
  if (type) {
    query = query.where('type', '=', type)
  }
  // Documented filters of soft-deleted messages (listed by default, with deletedAt/deletedBy).
  if (boolParam(q, 'onlyDeleted')) {
    query = query.where('deleted_at', 'is not', null)
  } else if (boolParam(q, 'hideDeleted')) {
    query = query.where('deleted_at', 'is', null)
  }
  // Documented: toTimestamp is ignored unless fromTimestamp is set.
  if (from !== undefined) {
    query = query.where('sent_at', '>=', from)
    if (to !== undefined) {
      query = query.where('sent_at', '<=', to)
    }
  }
  if (cursorSentAt !== undefined) {
    // With only sentAt, the cursor sits before (append) / after (prepend) every message of that second.
    if (cursorId === undefined) {
      query = query.where('sent_at', affix === 'append' ? '>=' : '<=', cursorSentAt)
    } else if (affix === 'append') {
      query = query.where(sql<boolean>`(sent_at, id) > (${cursorSentAt}, ${cursorId})`)
    } else {
      query = query.where(sql<boolean>`(sent_at, id) < (${cursorSentAt}, ${cursorId})`)
    }
  }
  const direction = affix === 'append' ? 'asc' : 'desc'
  const rows = await query
    .orderBy('sent_at', direction)
    .orderBy('id', direction)
    .limit(limit + 1)
    .execute()
  const more = rows.length > limit
  const page = rows.slice(0, limit)
  // A prepend page is read newest-first but answered oldest-first, like every page.
  if (affix === 'prepend') {
    page.reverse()
  }
  const edge = affix === 'append' ? page[page.length - 1] : page[0]
  const meta: Record<string, unknown> = { current: { limit, count: page.length } }
  if (more && edge) {
    meta.next = { affix, sentAt: Number(edge.sent_at), id: String(edge.id) }
  }
  return { status: 200, headers, body: { data: await listedMessages(services, app.id, page), meta } }
}

async function getMessage(services: SandboxServices, ctx: RequestContext): Promise<Reply> {
  const { app, headers } = chatCaller(services, ctx)
  const raw = ctx.params.id ?? ''
  const row = /^\d{1,18}$/.test(raw)
    ? await services.db.selectFrom('messages').selectAll().where('app_id', '=', app.id).where('id', '=', Number(raw)).executeTakeFirst()
    : undefined
  if (!row) {
    throw new HttpError(404, 'ERR_MESSAGE_ID_NOT_FOUND', `The message ${raw} does not exist.`, { headers })
  }
  const [message] = await listedMessages(services, app.id, [row])
  return { status: 200, headers, body: { data: message } }
}

/** Messages in the listed shape, with the sender's and receiver's objects (two queries per page). */
async function listedMessages(
  services: SandboxServices,
  appId: string,
  rows: readonly Selectable<MessagesTable>[],
): Promise<Record<string, unknown>[]> {
  const uids = new Set<string>()
  const guids = new Set<string>()
  for (const r of rows) {
    uids.add(r.sender)
    if (r.receiver_type === 'group') {
      guids.add(r.receiver)
    } else {
      uids.add(r.receiver)
    }
  }
  const users =
    uids.size === 0
      ? []
      : await services.db
          .selectFrom('users')
          .selectAll()
          .where('app_id', '=', appId)
          .where('uid', 'in', [...uids])
          .execute()
  const groups =
    guids.size === 0
      ? []
      : await services.db
          .selectFrom('groups')
          .selectAll()
          .where('app_id', '=', appId)
          .where('guid', 'in', [...guids])
          .execute()
  const userOf = new Map(users.map((u) => [u.uid, u]))
  const groupOf = new Map(groups.map((g) => [g.guid, g]))
  return rows.map((r) =>
    listedMessageObject(r, {
      sender: userOf.get(r.sender),
      receiver: r.receiver_type === 'group' ? groupOf.get(r.receiver) : userOf.get(r.receiver),
    }),
  )
}

/** The chat read routes, under both documented prefixes. */
export function chatRoutes(services: SandboxServices): Route[] {
  return API_VERSIONS.flatMap((v): Route[] => [
    { method: 'GET', pattern: `/apps/:appId/${v}/users`, handler: (ctx) => listUsers(services, ctx) },
    { method: 'GET', pattern: `/apps/:appId/${v}/users/:uid`, handler: (ctx) => getUser(services, ctx) },
    { method: 'GET', pattern: `/apps/:appId/${v}/groups`, handler: (ctx) => listGroups(services, ctx) },
    { method: 'GET', pattern: `/apps/:appId/${v}/groups/:guid`, handler: (ctx) => getGroup(services, ctx) },
    { method: 'GET', pattern: `/apps/:appId/${v}/groups/:guid/members`, handler: (ctx) => listMembers(services, ctx, false) },
    { method: 'GET', pattern: `/apps/:appId/${v}/groups/:guid/bannedusers`, handler: (ctx) => listMembers(services, ctx, true) },
    { method: 'GET', pattern: `/apps/:appId/${v}/messages`, handler: (ctx) => listMessages(services, ctx) },
    { method: 'GET', pattern: `/apps/:appId/${v}/messages/:id`, handler: (ctx) => getMessage(services, ctx) },
  ])
}
