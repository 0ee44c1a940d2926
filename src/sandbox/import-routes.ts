/**
 * The four data-import endpoints (documented: facts §1): `POST data_import/users|groups|members|
 * messages` with a body `{<entity>: {<key>: item}}`, at most `itemsPerRequest` items, one result
 * per item keyed as sent. A request holding a bad row on an endpoint of `badRow500` (default:
 * messages, per the vendor's migration guidance) writes its good rows and answers 500
 * `ERR_EXCEPTION` without per-item results; elsewhere HTTP 200 even when some items fail.
 *
 * Each request is a handful of multi-row statements (look up, in parallel, what the batch refers
 * to, then one INSERT … ON CONFLICT DO NOTHING RETURNING), so a batch of 50 costs the same few
 * round trips as a batch of 1. The single INSERT makes the request atomic; a request refused as a
 * whole writes nothing.
 */
import { type Selectable, sql } from 'kysely'

import { ENTITIES, type Entity, type GroupImport, type MemberImport, memberKey, type MessageImport, type UserImport } from '../target/schemas.ts'
import type { AppInfo } from './app-registry.ts'
import { unreachableAttachments } from './attachment-reachability.ts'
import { authenticateApp } from './auth.ts'
import { type FaultPlan, properSubset } from './fault-injector.ts'
import { type HeaderMap, HttpError, isPlainObject, jsonBody, type Reply, type RequestContext } from './http-kit.ts'
import { checkGroup, checkMember, checkMessage, checkUser, type ItemError, itemError } from './import-validation.ts'
import { rateLimitHeaders } from './rate-limiter.ts'
import { conversationIdOf, entityWrapper, groupObject, messageObject, userObject } from './representations.ts'
import { ALREADY_EXISTS_CODES, type RequestLogEntry, type RequestLogItem } from './request-log.ts'
import type { Route } from './router.ts'
import { API_VERSIONS, type SandboxServices } from './sandbox-services.ts'
import { type GroupsTable, type SandboxDb, toJson, type UsersTable } from './sandbox-store.ts'
import type { WebhookEvent } from './webhook-dispatcher.ts'

/** Documented per-entity codes for a malformed wrapper (facts §1.7). */
const FORMAT_CODES: Record<Entity, string> = {
  users: 'ERR_IMPORT_INVALID_USER_FORMAT',
  groups: 'ERR_IMPORT_INVALID_GROUP_FORMAT',
  members: 'ERR_IMPORT_INVALID_MEMBER_FORMAT',
  messages: 'ERR_IMPORT_INVALID_MESSAGE_FORMAT',
}

type ItemResult = { success: true; data: Record<string, unknown> } | { success: false; error: ItemError }

interface Outcome {
  readonly results: Map<string, ItemResult>
  readonly committed: number
  readonly events: WebhookEvent[]
}

interface ProcessInput {
  readonly db: SandboxDb
  readonly app: AppInfo
  readonly entries: readonly (readonly [string, unknown])[]
  readonly nowSeconds: number
  /**
   * Which of the items that would succeed (in request order) are written, knowing the refusals so
   * far: all of them, a partial-commit fault's subset or prefix, or those before the first bad row.
   */
  readonly choose: <T extends { readonly key: string }>(good: readonly T[], refusals: ReadonlyMap<string, ItemResult>) => T[]
  /** A partial commit must choose among items that will succeed, so duplicates are looked up first. */
  readonly partial: boolean
}

type Processor = (input: ProcessInput) => Promise<Outcome>

function failure(error: ItemError): ItemResult {
  return { success: false, error }
}

const alreadyExists = (code: string, what: string) => failure(itemError(code, `${what} already exists.`))

type UserRow = Selectable<UsersTable>
type GroupRow = Selectable<GroupsTable>

/** `column = any($1::text[])`: one parameter instead of one per value, so the statement stays small. */
function anyOf(column: string, values: readonly string[]) {
  return sql<boolean>`${sql.ref(column)} = any(${[...values]}::text[])`
}

async function usersById(db: SandboxDb, appId: string, uids: Iterable<string>): Promise<Map<string, UserRow>> {
  const list = [...new Set(uids)]
  if (list.length === 0) {
    return new Map()
  }
  const rows = await db.selectFrom('users').selectAll().where('app_id', '=', appId).where(anyOf('uid', list)).execute()
  return new Map(rows.map((r) => [r.uid, r]))
}

// ─── users ───────────────────────────────────────────────────────────────────────────────────────

const importUsers: Processor = async ({ db, app, entries, nowSeconds, choose }) => {
  const results = new Map<string, ItemResult>()
  const good: { key: string; item: UserImport }[] = []
  const seen = new Set<string>()
  for (const [key, raw] of entries) {
    const c = checkUser(key, raw, app.settings)
    if (!c.ok) {
      results.set(key, failure(c.error))
    } else if (seen.has(c.item.uid)) {
      results.set(key, alreadyExists('ERR_UID_ALREADY_EXISTS', `The uid ${c.item.uid} is given twice in this request; it`))
    } else {
      seen.add(c.item.uid)
      good.push({ key, item: c.item })
    }
  }
  const existing = await usersById(
    db,
    app.id,
    good.map((g) => g.item.uid),
  )
  const fresh = good.filter((g) => {
    if (!existing.has(g.item.uid)) {
      return true
    }
    results.set(g.key, alreadyExists('ERR_UID_ALREADY_EXISTS', `The user ${g.item.uid}`))
    return false
  })
  const chosen = choose(fresh, results)
  const rows =
    chosen.length === 0
      ? []
      : await db
          .insertInto('users')
          .values(
            chosen.map(({ item }) => ({
              app_id: app.id,
              uid: item.uid,
              name: item.name,
              avatar: item.avatar ?? null,
              link: item.link ?? null,
              role: item.role ?? 'default',
              metadata: toJson(item.metadata),
              tags: toJson(item.tags ?? []),
              created_at: item.createdAt ?? nowSeconds,
              updated_at: nowSeconds,
              last_active_at: item.lastActiveAt ?? null,
              deactivated_at: item.deactivatedAt ?? null,
            })),
          )
          .onConflict((oc) => oc.columns(['app_id', 'uid']).doNothing())
          .returningAll()
          .execute()
  const inserted = new Map(rows.map((r) => [r.uid, r]))
  for (const { key, item } of chosen) {
    const row = inserted.get(item.uid)
    results.set(key, row ? { success: true, data: userObject(row) } : alreadyExists('ERR_UID_ALREADY_EXISTS', `The user ${item.uid}`))
  }
  return { results, committed: rows.length, events: [] }
}

// ─── groups ──────────────────────────────────────────────────────────────────────────────────────

const importGroups: Processor = async ({ db, app, entries, nowSeconds, choose }) => {
  const results = new Map<string, ItemResult>()
  const good: { key: string; item: GroupImport }[] = []
  const seen = new Set<string>()
  for (const [key, raw] of entries) {
    const c = checkGroup(key, raw)
    if (!c.ok) {
      results.set(key, failure(c.error))
    } else if (seen.has(c.item.guid)) {
      results.set(key, alreadyExists('ERR_GUID_ALREADY_EXISTS', `The guid ${c.item.guid} is given twice in this request; it`))
    } else {
      seen.add(c.item.guid)
      good.push({ key, item: c.item })
    }
  }
  const guids = good.map((g) => g.item.guid)
  const existing =
    guids.length === 0
      ? new Set<string>()
      : new Set((await db.selectFrom('groups').select('guid').where('app_id', '=', app.id).where(anyOf('guid', guids)).execute()).map((r) => r.guid))
  // Stricter than documented (groupOwnerDetails could be read as "create the owner"): the owner
  // must already exist, like every user a later record refers to.
  const owners = await usersById(
    db,
    app.id,
    good.flatMap((g) => (g.item.owner ? [g.item.owner] : [])),
  )
  const fresh = good.filter((g) => {
    if (existing.has(g.item.guid)) {
      results.set(g.key, alreadyExists('ERR_GUID_ALREADY_EXISTS', `The group ${g.item.guid}`))
    } else if (g.item.owner !== undefined && !owners.has(g.item.owner)) {
      results.set(g.key, failure(itemError('ERR_UID_NOT_FOUND', `The owner ${g.item.owner} does not exist.`, { owner: ['does not exist'] })))
    } else {
      return true
    }
    return false
  })
  const chosen = choose(fresh, results)
  const rows =
    chosen.length === 0
      ? []
      : await db
          .insertInto('groups')
          .values(
            chosen.map(({ item }) => ({
              app_id: app.id,
              guid: item.guid,
              name: item.name,
              type: item.type,
              icon: item.icon ?? null,
              password: item.password ?? null,
              owner: item.owner ?? null,
              metadata: toJson(item.metadata),
              tags: toJson(item.tags ?? []),
              created_at: item.createdAt ?? nowSeconds,
              updated_at: nowSeconds,
            })),
          )
          .onConflict((oc) => oc.columns(['app_id', 'guid']).doNothing())
          .returningAll()
          .execute()
  const inserted = new Map(rows.map((r) => [r.guid, r]))
  const events: WebhookEvent[] = []
  for (const { key, item } of chosen) {
    const row = inserted.get(item.guid)
    if (!row) {
      results.set(key, alreadyExists('ERR_GUID_ALREADY_EXISTS', `The group ${item.guid}`))
      continue
    }
    const group = groupObject(row)
    delete group.updatedAt
    results.set(key, { success: true, data: group })
    events.push({ trigger: 'group_created', data: { group: groupObject(row, 0), members: {} } })
  }
  return { results, committed: rows.length, events }
}

// ─── members ─────────────────────────────────────────────────────────────────────────────────────

/** How many members each of `guids` has, and in how many groups each user of `good` is. */
async function memberCounts(
  db: SandboxDb,
  appId: string,
  guids: readonly string[],
  good: readonly { item: MemberImport }[],
): Promise<[Map<string, number>, Map<string, number>]> {
  const uids = [...new Set(good.map((g) => g.item.uid))]
  const [byGroup, byUser] = await Promise.all([
    db
      .selectFrom('members')
      .select((eb) => ['guid', eb.fn.countAll<number>().as('n')])
      .where('app_id', '=', appId)
      .where(anyOf('guid', guids))
      .groupBy('guid')
      .execute(),
    db
      .selectFrom('members')
      .select((eb) => ['uid', eb.fn.countAll<number>().as('n')])
      .where('app_id', '=', appId)
      .where(anyOf('uid', uids))
      .groupBy('uid')
      .execute(),
  ])
  return [new Map(byGroup.map((r) => [r.guid, Number(r.n)])), new Map(byUser.map((r) => [r.uid, Number(r.n)]))]
}

const importMembers: Processor = async ({ db, app, entries, nowSeconds, choose }) => {
  const results = new Map<string, ItemResult>()
  const good: { key: string; item: MemberImport }[] = []
  for (const [key, raw] of entries) {
    const c = checkMember(key, raw)
    if (!c.ok) {
      results.set(key, failure(c.error))
    } else {
      good.push({ key, item: c.item })
    }
  }
  const guids = [...new Set(good.map((g) => g.item.guid))]
  const groups =
    guids.length === 0
      ? new Map<string, GroupRow>()
      : new Map(
          (await db.selectFrom('groups').selectAll().where('app_id', '=', app.id).where(anyOf('guid', guids)).execute()).map((r) => [r.guid, r]),
        )
  const wantOwners = app.settings.webhooksOnImport ? [...groups.values()].flatMap((g) => (g.owner ? [g.owner] : [])) : []
  const users = await usersById(db, app.id, [...good.map((g) => g.item.uid), ...wantOwners])
  const joined = new Set<string>()
  if (good.length > 0) {
    const rows = await db
      .selectFrom('members')
      .select(['guid', 'uid'])
      .where('app_id', '=', app.id)
      .where(anyOf('guid', guids))
      .where(anyOf('uid', [...new Set(good.map((g) => g.item.uid))]))
      .execute()
    for (const r of rows) {
      joined.add(memberKey(r.guid, r.uid))
    }
  }
  // Documented: a group holds at most 100,000 members (full: ERR_NO_VACANCY) and a user is in at
  // most 2,000 groups (no code published: ERR_BAD_REQUEST, assumed). Banned members count too (assumed).
  const [groupCounts, userCounts] =
    good.length === 0 ? [new Map<string, number>(), new Map<string, number>()] : await memberCounts(db, app.id, guids, good)
  const fresh: { key: string; item: MemberImport; joinedAt: number }[] = []
  for (const { key, item } of good) {
    const group = groups.get(item.guid)
    const id = memberKey(item.guid, item.uid)
    if (group === undefined) {
      results.set(key, failure(itemError('ERR_GUID_NOT_FOUND', `The group ${item.guid} does not exist.`)))
    } else if (!users.has(item.uid)) {
      results.set(key, failure(itemError('ERR_UID_NOT_FOUND', `The user ${item.uid} does not exist.`)))
    } else if (joined.has(id)) {
      results.set(key, failure(itemError('ERR_ALREADY_JOINED', `The user ${item.uid} is already a member of the group ${item.guid}.`)))
    } else {
      // Documented: joinedAt must be later than the group's createdAt and earlier than now.
      // Absent, it is the time of the import (assumed).
      const joinedAt = item.joinedAt ?? nowSeconds
      if (item.joinedAt !== undefined && (joinedAt <= Number(group.created_at) || joinedAt >= nowSeconds)) {
        results.set(
          key,
          failure(
            itemError(
              'ERR_IMPORT_INVALID_JOINEDAT',
              `joinedAt must be later than the group's createdAt (${group.created_at}) and earlier than now (${nowSeconds}).`,
              {
                joinedAt: [`must be between ${group.created_at} and ${nowSeconds}, exclusive`],
              },
            ),
          ),
        )
        continue
      }
      const inGroup = groupCounts.get(item.guid) ?? 0
      const groupsOfUser = userCounts.get(item.uid) ?? 0
      if (inGroup >= app.settings.maxMembersPerGroup) {
        results.set(
          key,
          failure(
            itemError(
              'ERR_NO_VACANCY',
              `The group ${item.guid} is full: it has ${inGroup} members, at most ${app.settings.maxMembersPerGroup} are allowed.`,
            ),
          ),
        )
        continue
      }
      if (groupsOfUser >= app.settings.maxGroupsPerUser) {
        results.set(
          key,
          failure(
            itemError(
              'ERR_BAD_REQUEST',
              `The user ${item.uid} is a member of ${groupsOfUser} groups; at most ${app.settings.maxGroupsPerUser} are allowed.`,
              {
                uid: [`is already in ${groupsOfUser} groups (at most ${app.settings.maxGroupsPerUser})`],
              },
            ),
          ),
        )
        continue
      }
      groupCounts.set(item.guid, inGroup + 1)
      userCounts.set(item.uid, groupsOfUser + 1)
      joined.add(id)
      fresh.push({ key, item, joinedAt })
    }
  }
  const chosen = choose(fresh, results)
  const rows =
    chosen.length === 0
      ? []
      : await db
          .insertInto('members')
          .values(
            chosen.map(({ item, joinedAt }) => ({
              app_id: app.id,
              guid: item.guid,
              uid: item.uid,
              scope: item.scope ?? 'participant',
              is_banned: item.isBanned ?? false,
              joined_at: joinedAt,
              created_at: nowSeconds,
            })),
          )
          .onConflict((oc) => oc.columns(['app_id', 'guid', 'uid']).doNothing())
          .returning(['guid', 'uid', 'scope', 'joined_at', 'is_banned'])
          .execute()
  const inserted = new Map(rows.map((r) => [memberKey(r.guid, r.uid), r]))
  const added = new Map<string, Record<string, unknown>>()
  for (const { key, item } of chosen) {
    const row = inserted.get(memberKey(item.guid, item.uid))
    if (!row) {
      results.set(key, failure(itemError('ERR_ALREADY_JOINED', `The user ${item.uid} is already a member of the group ${item.guid}.`)))
      continue
    }
    results.set(key, {
      success: true,
      data: { guid: row.guid, uid: row.uid, scope: row.scope, joinedAt: Number(row.joined_at), ...(row.is_banned ? { isBanned: true } : {}) },
    })
    const user = users.get(row.uid)
    if (user) {
      const members = added.get(row.guid) ?? {}
      members[row.uid] = { ...userObject(user), scope: row.scope, joinedAt: Number(row.joined_at) }
      added.set(row.guid, members)
    }
  }
  const events: WebhookEvent[] = []
  if (app.settings.webhooksOnImport && added.size > 0) {
    const counts = await db
      .selectFrom('members')
      .select((eb) => ['guid', eb.fn.countAll<number>().as('n')])
      .where('app_id', '=', app.id)
      .where(anyOf('guid', [...added.keys()]))
      .where('is_banned', '=', false)
      .groupBy('guid')
      .execute()
    const countOf = new Map(counts.map((c) => [c.guid, Number(c.n)]))
    for (const [guid, members] of added) {
      const group = groups.get(guid)
      if (!group) {
        continue
      }
      const owner = group.owner ? users.get(group.owner) : undefined
      // Who added the members is not recorded by an import; the owner is named (assumed).
      const by = owner ? userObject(owner) : { uid: 'app_system', name: 'app_system' }
      events.push({ trigger: 'group_member_added', data: { group: groupObject(group, countOf.get(guid) ?? 0), members, by } })
    }
  }
  return { results, committed: rows.length, events }
}

// ─── messages ────────────────────────────────────────────────────────────────────────────────────

const importMessages: Processor = async ({ db, app, entries, nowSeconds, choose, partial }) => {
  const results = new Map<string, ItemResult>()
  let good: { key: string; item: MessageImport }[] = []
  const seen = new Set<string>()
  for (const [key, raw] of entries) {
    const c = checkMessage(key, raw, app.settings, nowSeconds)
    if (!c.ok) {
      results.set(key, failure(c.error))
    } else if (seen.has(c.item.muid)) {
      results.set(key, alreadyExists('ERR_IMPORT_MUID_ALREADY_EXISTS', `The muid ${c.item.muid} is given twice in this request; it`))
    } else {
      seen.add(c.item.muid)
      good.push({ key, item: c.item })
    }
  }
  if (app.settings.checkAttachmentUrls && good.length > 0) {
    const unreachable = await unreachableAttachments(good)
    for (const [key, problem] of unreachable) {
      results.set(key, failure(itemError('ERR_ATTACHMENT_UNREACHABLE', problem)))
    }
    good = good.filter((g) => !unreachable.has(g.key))
  }
  if (good.length === 0) {
    return { results, committed: 0, events: [] }
  }
  const guids = [...new Set(good.flatMap((g) => (g.item.receiverType === 'group' ? [g.item.receiver] : [])))]
  const [existingRows, users, groupRows, memberRows] = await Promise.all([
    // Outside a partial commit, ON CONFLICT finds the duplicates; no look-up needed.
    partial
      ? db
          .selectFrom('messages')
          .select('muid')
          .where('app_id', '=', app.id)
          .where(
            anyOf(
              'muid',
              good.map((g) => g.item.muid),
            ),
          )
          .execute()
      : [],
    usersById(
      db,
      app.id,
      good.flatMap((g) => (g.item.receiverType === 'user' ? [g.item.sender, g.item.receiver] : [g.item.sender])),
    ),
    guids.length === 0 ? [] : db.selectFrom('groups').selectAll().where('app_id', '=', app.id).where(anyOf('guid', guids)).execute(),
    app.settings.requireGroupMembership && guids.length > 0
      ? db
          .selectFrom('members')
          .select(['guid', 'uid'])
          .where('app_id', '=', app.id)
          .where(anyOf('guid', guids))
          .where(anyOf('uid', [...new Set(good.map((g) => g.item.sender))]))
          .where('is_banned', '=', false)
          .execute()
      : [],
  ])
  const existing = new Set(existingRows.map((r) => r.muid))
  const groups = new Map(groupRows.map((r) => [r.guid, r]))
  const memberships = new Set(memberRows.map((r) => memberKey(r.guid, r.uid)))
  const fresh: { key: string; item: MessageImport }[] = []
  for (const g of good) {
    const { item } = g
    // Stricter than the docs' ambiguous wording (gap 7): senderUserDetails / receiverUserDetails /
    // receiverGroupDetails never create anything; sender and receiver must have been imported.
    if (!users.has(item.sender)) {
      results.set(g.key, failure(itemError('ERR_UID_NOT_FOUND', `The sender ${item.sender} does not exist.`, { sender: ['does not exist'] })))
    } else if (item.receiverType === 'user' && !users.has(item.receiver)) {
      results.set(g.key, failure(itemError('ERR_UID_NOT_FOUND', `The receiver ${item.receiver} does not exist.`, { receiver: ['does not exist'] })))
    } else if (item.receiverType === 'group' && !groups.has(item.receiver)) {
      results.set(g.key, failure(itemError('ERR_GUID_NOT_FOUND', `The group ${item.receiver} does not exist.`, { receiver: ['does not exist'] })))
    } else if (item.receiverType === 'group' && app.settings.requireGroupMembership && !memberships.has(memberKey(item.receiver, item.sender))) {
      results.set(g.key, failure(itemError('ERR_NOT_A_MEMBER', `The sender ${item.sender} is not a member of the group ${item.receiver}.`)))
    } else if (existing.has(item.muid)) {
      results.set(g.key, alreadyExists('ERR_IMPORT_MUID_ALREADY_EXISTS', `A message with the muid ${item.muid}`))
    } else {
      fresh.push(g)
    }
  }
  const chosen = choose(fresh, results)
  const importedAt = Date.now()
  const values = chosen.map(({ item }) => ({
    app_id: app.id,
    muid: item.muid,
    conversation_id: conversationIdOf(item.sender, item.receiverType, item.receiver),
    sender: item.sender,
    receiver_type: item.receiverType,
    receiver: item.receiver,
    category: item.category ?? 'message',
    type: item.type ?? 'text',
    data: JSON.stringify(item.data ?? {}),
    tags: toJson(item.tags),
    sent_at: item.sentAt,
    delivered_at: item.deliveredAt ?? null,
    read_at: item.readAt ?? null,
    updated_at: item.sentAt,
    imported_at_ms: importedAt,
  }))
  // One INSERT … SELECT FROM unnest(arrays): 14 parameters whatever the batch size, which keeps
  // Postgres' parse and bind cost flat on the hot path of a migration.
  const col = <K extends keyof (typeof values)[number]>(k: K) => values.map((v) => v[k])
  const ids =
    values.length === 0
      ? []
      : (
          await sql<{ id: number; muid: string }>`
            insert into sandbox.messages
              (app_id, muid, conversation_id, sender, receiver_type, receiver, category, type, data, tags,
               sent_at, delivered_at, read_at, updated_at, imported_at_ms)
            select ${app.id}, u.muid, u.conversation_id, u.sender, u.receiver_type, u.receiver, u.category, u.type,
                   u.data::jsonb, u.tags::jsonb, u.sent_at, u.delivered_at, u.read_at, u.sent_at, ${importedAt}::bigint
            from unnest(${col('muid')}::text[], ${col('conversation_id')}::text[], ${col('sender')}::text[],
                        ${col('receiver_type')}::text[], ${col('receiver')}::text[], ${col('category')}::text[],
                        ${col('type')}::text[], ${col('data')}::text[], ${col('tags')}::text[], ${col('sent_at')}::bigint[],
                        ${col('delivered_at')}::bigint[], ${col('read_at')}::bigint[])
              as u(muid, conversation_id, sender, receiver_type, receiver, category, type, data, tags, sent_at, delivered_at, read_at)
            on conflict (app_id, muid) do nothing
            returning id, muid`.execute(db)
        ).rows
  const valueOf = new Map(values.map((v) => [v.muid, v]))
  const rows = ids.map(({ id, muid }) => {
    const v = valueOf.get(muid) as (typeof values)[number]
    return { ...v, id: Number(id), data: JSON.parse(v.data) as unknown, tags: v.tags === null ? null : (JSON.parse(v.tags) as unknown) }
  })
  const inserted = new Map(rows.map((r) => [r.muid, r]))
  const events: WebhookEvent[] = []
  for (const { key, item } of chosen) {
    const row = inserted.get(item.muid)
    if (!row) {
      results.set(key, alreadyExists('ERR_IMPORT_MUID_ALREADY_EXISTS', `A message with the muid ${item.muid}`))
      continue
    }
    const message = messageObject(row)
    const sender = users.get(item.sender) as UserRow
    const receiver =
      item.receiverType === 'user'
        ? entityWrapper(userObject(users.get(item.receiver) as UserRow), 'user')
        : entityWrapper(groupObject(groups.get(item.receiver) as GroupRow), 'group')
    message.data = { ...(row.data as object), entities: { sender: entityWrapper(userObject(sender), 'user'), receiver } }
    results.set(key, { success: true, data: message })
    events.push({ trigger: 'message_sent', data: { message } })
  }
  return { results, committed: rows.length, events }
}

const PROCESSORS: Record<Entity, Processor> = {
  users: importUsers,
  groups: importGroups,
  members: importMembers,
  messages: importMessages,
}

// ─── the request around it ───────────────────────────────────────────────────────────────────────

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

/** Reads `{<entity>: {<key>: item}}`; a refusal of the whole request throws. */
function readItems(entity: Entity, ctx: RequestContext, itemsPerRequest: number): [string, unknown][] {
  const body = jsonBody(ctx)
  if (!isPlainObject(body)) {
    throw new HttpError(400, 'ERR_BAD_REQUEST', 'The request body must be a JSON object.')
  }
  // Documented oddity: examples send extra top-level fields (guid, name, type) beside `messages`;
  // other top-level fields are ignored.
  const wrapper = body[entity]
  if (!isPlainObject(wrapper)) {
    throw new HttpError(
      400,
      FORMAT_CODES[entity],
      `The body must hold ${entity} as an object keyed by ${entity === 'members' ? '<guid>_member_<uid>' : 'id'}.`,
      {
        details: { [entity]: [wrapper === undefined ? 'is required' : 'must be an object (a map of key to item)'] },
      },
    )
  }
  const entries = Object.entries(wrapper)
  if (entries.length === 0) {
    throw new HttpError(400, FORMAT_CODES[entity], `${entity} holds no items.`, { details: { [entity]: ['must hold at least one item'] } })
  }
  if (entries.length > itemsPerRequest) {
    throw new HttpError(400, 'ERR_BAD_REQUEST', `At most ${itemsPerRequest} ${entity} can be imported in one request, got ${entries.length}.`, {
      details: { [entity]: [`must hold at most ${itemsPerRequest} items`] },
    })
  }
  return entries
}

/** The keys a request carried, each `unprocessed`, for the log; null when the body is not an import wrapper. */
function carriedUnprocessed(entity: Entity, ctx: RequestContext): RequestLogItem[] | null {
  try {
    const body = jsonBody(ctx)
    const wrapper = isPlainObject(body) ? body[entity] : undefined
    return isPlainObject(wrapper) ? Object.keys(wrapper).map((key) => ({ key, result: 'unprocessed' })) : null
  } catch {
    return null
  }
}

/** What became of each item of a processed request, for the log. */
function itemOutcomes(entries: readonly (readonly [string, unknown])[], results: ReadonlyMap<string, ItemResult>): RequestLogItem[] {
  return entries.map(([key]): RequestLogItem => {
    const r = results.get(key)
    if (r === undefined) {
      return { key, result: 'unwritten' }
    }
    if (r.success) {
      return { key, result: 'created' }
    }
    return { key, result: ALREADY_EXISTS_CODES.has(r.error.code) ? 'exists' : 'refused', code: r.error.code }
  })
}

/**
 * The documented 429 message, verbatim with its word order ("Please retry for seconds after 58.",
 * `rest-api/data-migration-constraints-rate-limits-and-errors.mdx`), the limit and the whole
 * seconds until a slot frees filled in. Without `rateLimitHeaders` it is the only place the wait is.
 */
export function tooManyRequestsMessage(limit: number, retryAfterSeconds: number): string {
  return `Too many requests for data import API. ${limit} per minute is the maximum request allowed. Please retry for seconds after ${retryAfterSeconds}.`
}

function tooManyRequests(limit: number, retryAfterSeconds: number, headers: HeaderMap): HttpError {
  return new HttpError(429, 'ERR_TOO_MANY_REQUESTS', tooManyRequestsMessage(limit, retryAfterSeconds), { headers })
}

/** The first 0 to n−1 of the good items, in request order: a write cut short (`partialCommitShape: prefix`). */
function goodPrefix<T>(good: readonly T[], random: () => number): T[] {
  return good.slice(0, Math.floor(random() * good.length))
}

/**
 * `badRowCommit: stop-at-bad-row`: the good items before the first row the platform refuses (not
 * "already exists") in request order; all of them when none is refused.
 */
function beforeFirstBadRow<T extends { readonly key: string }>(
  entries: readonly (readonly [string, unknown])[],
  good: readonly T[],
  refusals: ReadonlyMap<string, ItemResult>,
): T[] {
  const firstBad = entries.findIndex(([key]) => {
    const r = refusals.get(key)
    return r !== undefined && !r.success && !ALREADY_EXISTS_CODES.has(r.error.code)
  })
  if (firstBad < 0) {
    return [...good]
  }
  const before = new Set(entries.slice(0, firstBad).map(([key]) => key))
  return good.filter((g) => before.has(g.key))
}

/** The rows of a processed request the platform refuses (not "already exists"): they make a `badRow500` request fail. */
function badRows(results: ReadonlyMap<string, ItemResult>): number {
  let n = 0
  for (const r of results.values()) {
    if (!r.success && !ALREADY_EXISTS_CODES.has(r.error.code)) {
      n++
    }
  }
  return n
}

async function handleImport(services: SandboxServices, entity: Entity, ctx: RequestContext): Promise<Reply> {
  const { app } = authenticateApp(ctx, services.registry)
  const settings = app.settings
  const entry: RequestLogEntry = {
    appId: app.id,
    receivedAtMs: ctx.receivedAtMs,
    method: ctx.method,
    path: ctx.path,
    endpoint: entity,
    itemCount: null,
    status: null,
    code: null,
    fault: null,
    committed: 0,
    latencyMs: 0,
    durationMs: 0,
  }
  const finish = (reply: Reply): Reply => {
    if ('status' in reply) {
      entry.status = reply.status
      const body = reply.body as { error?: { code?: string } } | undefined
      entry.code = body?.error?.code ?? null
    }
    entry.items ??= carriedUnprocessed(entity, ctx)
    entry.durationMs = Date.now() - ctx.receivedAtMs
    services.requestLog.add(entry)
    return reply
  }

  const plan: FaultPlan = services.faults.plan(app.id, settings.faults)
  if (plan.fault === 'extra429') {
    entry.fault = 'extra429'
    const d = services.limiter.peek(app.id, settings.requestsPerMinute, settings.windowMs)
    const headers = settings.rateLimitHeaders ? rateLimitHeaders({ ...d, allowed: false, retryAfterSeconds: 1 }) : {}
    return finish(tooManyRequests(settings.requestsPerMinute, 1, headers).toReply())
  }
  const decision = services.limiter.take(app.id, settings.requestsPerMinute, settings.windowMs)
  const headers = settings.rateLimitHeaders ? rateLimitHeaders(decision) : {}
  if (!decision.allowed) {
    return finish(tooManyRequests(settings.requestsPerMinute, decision.retryAfterSeconds, headers).toReply())
  }

  if (plan.latencyMs > 0) {
    entry.latencyMs = plan.latencyMs
    await sleep(plan.latencyMs)
  }
  if (plan.fault === 'dropBeforeCommit') {
    entry.fault = 'dropBeforeCommit'
    return finish({ drop: true })
  }
  try {
    const entries = readItems(entity, ctx, settings.itemsPerRequest)
    entry.itemCount = entries.length
    // A partial commit needs two rows: a 500 to a request of one row is the platform's word about that row.
    const partial = plan.fault === 'partialCommit500' && entries.length >= 2
    const stopAtBadRow = settings.badRow500.includes(entity) && settings.badRowCommit === 'stop-at-bad-row'
    // Every processor writes with exactly one statement, after all its checks: the request is
    // atomic without a transaction (and a refused request has written nothing).
    const outcome = await PROCESSORS[entity]({
      db: services.db,
      app,
      entries,
      nowSeconds: Math.floor(Date.now() / 1000),
      choose: partial
        ? (good) => (settings.faults.partialCommitShape === 'prefix' ? goodPrefix(good, plan.random) : properSubset(good, plan.random))
        : stopAtBadRow
          ? (good, refusals) => beforeFirstBadRow(entries, good, refusals)
          : (good) => [...good],
      partial: partial || stopAtBadRow,
    })
    entry.committed = outcome.committed
    entry.items = itemOutcomes(entries, outcome.results)
    if (outcome.events.length > 0 && settings.webhooksOnImport) {
      services.webhooks.dispatch(app, outcome.events)
    }
    if (partial) {
      entry.fault = 'partialCommit500'
      throw new HttpError(500, 'ERR_EXCEPTION', 'Something went wrong while importing; some items may have been imported.')
    }
    if (settings.badRow500.includes(entity) && badRows(outcome.results) > 0) {
      // The vendor's migration guidance: a row the platform rejects "aborts the whole request with
      // HTTP 500 (ERR_EXCEPTION) after the good rows have already imported". Which row, and why,
      // is not said: the answer names neither (assumed, the body's shape is not documented).
      throw new HttpError(500, 'ERR_EXCEPTION', 'Something went wrong while importing; some items may have been imported.')
    }
    if (plan.fault === 'dropAfterCommit') {
      entry.fault = 'dropAfterCommit'
      return finish({ drop: true })
    }
    const data: Record<string, ItemResult> = {}
    for (const [key] of entries) {
      data[key] = outcome.results.get(key) as ItemResult
    }
    return finish({ status: 200, body: { data }, headers })
  } catch (err) {
    if (err instanceof HttpError) {
      return finish(err.withHeaders(headers).toReply())
    }
    entry.status = 500
    entry.code = 'ERR_EXCEPTION'
    entry.items ??= carriedUnprocessed(entity, ctx)
    entry.durationMs = Date.now() - ctx.receivedAtMs
    services.requestLog.add(entry)
    throw err
  }
}

/** The data-import routes, under both documented prefixes. */
export function importRoutes(services: SandboxServices): Route[] {
  return API_VERSIONS.flatMap((version) =>
    ENTITIES.map((entity): Route => ({
      method: 'POST',
      pattern: `/apps/:appId/${version}/data_import/${entity}`,
      readsBody: true,
      handler: (ctx) => handleImport(services, entity, ctx),
    })),
  )
}
