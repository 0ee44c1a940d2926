/**
 * `POST /groups/{guid}/members` (cometchat/docs `chat-apis.json`, add-group-members): lists
 * `admins`, `moderators`, `participants` and `usersToBan`; at most 25 users per call (documented,
 * `rest-api/group-members.mdx`; more → 400 `ERR_BAD_REQUEST`, code assumed); a uid in several lists
 * gets the first of admin, moderator, participant (documented), and a scope list beats `usersToBan`
 * (the documented example). One result per uid in its list: `{success: true, data: <action
 * message>}` (documented example; `usersToBan`: `{success: true}`), or `{success: false, error}`
 * ("the individual member failure can be seen in the error objects in their respective scope").
 * Per-uid codes: `ERR_UID_NOT_FOUND`, `ERR_ALREADY_JOINED`, `ERR_NO_VACANCY`, `ERR_ALREADY_BANNED`
 * (documented codes); a banned user added to a scope → `ERR_BANNED_GROUPMEMBER` (assumed: "a banned
 * user cannot rejoin the same group without being unbanned"). The action messages are not stored
 * (assumed). Webhooks `group_member_added` / `group_member_banned`: `{group, members, by}`.
 */
import { z } from 'zod'

import { ADD_MEMBER_LISTS, type AddMemberList, MEMBERS_PER_CALL_MAX } from '../target/chat-write-schemas.ts'
import { memberKey, type MemberScope } from '../target/schemas.ts'
import { existingGroup, type GroupRow, memberCount } from './chat-lookups.ts'
import { type ChatWrite, type ChatWriteSpec, idParam, writeBody } from './chat-write-route.ts'
import { HttpError, jsonBody, type RequestContext } from './http-kit.ts'
import { type ItemError, itemError } from './import-validation.ts'
import { entityWrapper, groupObject, userObject } from './representations.ts'
import type { SandboxServices } from './sandbox-services.ts'

/** The system user the platform names as the actor of API calls without `onBehalfOf` (documented examples). */
export const APP_SYSTEM = { uid: 'app_system', name: 'System', role: 'default', status: 'offline' }

const SCOPE_OF: Record<Exclude<AddMemberList, 'usersToBan'>, MemberScope> = { admins: 'admin', moderators: 'moderator', participants: 'participant' }

const AddBody = z
  .object(
    Object.fromEntries(ADD_MEMBER_LISTS.map((l) => [l, z.array(z.string().min(1).max(100)).optional()])) as Record<
      AddMemberList,
      z.ZodOptional<z.ZodArray<z.ZodString>>
    >,
  )
  .strict()

/** Each uid once, in the list that wins. */
function resolveLists(body: Partial<Record<AddMemberList, string[] | undefined>>): { uid: string; list: AddMemberList }[] {
  const seen = new Set<string>()
  const out: { uid: string; list: AddMemberList }[] = []
  for (const list of ADD_MEMBER_LISTS) {
    for (const raw of body[list] ?? []) {
      const uid = raw.toLowerCase()
      if (!seen.has(uid)) {
        seen.add(uid)
        out.push({ uid, list })
      }
    }
  }
  return out
}

type Outcome = { ok: true; action?: Record<string, unknown> } | { ok: false; error: ItemError }

function addedAction(group: GroupRow, user: Record<string, unknown>, now: number): Record<string, unknown> {
  return {
    conversationId: `group_${group.guid}`,
    sender: APP_SYSTEM.uid,
    receiverType: 'group',
    receiver: group.guid,
    category: 'action',
    type: 'groupMember',
    data: {
      action: 'added',
      entities: { by: entityWrapper(APP_SYSTEM, 'user'), on: entityWrapper(user, 'user'), for: entityWrapper(groupObject(group), 'group') },
    },
    sentAt: now,
    updatedAt: now,
  }
}

async function addMembers(services: SandboxServices, ctx: RequestContext, w: ChatWrite) {
  const guid = idParam(ctx, 'guid')
  const wanted = resolveLists(writeBody(ctx, AddBody))
  if (wanted.length === 0 || wanted.length > MEMBERS_PER_CALL_MAX) {
    throw new HttpError(400, 'ERR_BAD_REQUEST', `Between 1 and ${MEMBERS_PER_CALL_MAX} users can be added per call, got ${wanted.length}.`)
  }
  const group = await existingGroup(services.db, w.app.id, guid)
  const uids = wanted.map((x) => x.uid)
  const [users, rows] = await Promise.all([
    services.db.selectFrom('users').selectAll().where('app_id', '=', w.app.id).where('uid', 'in', uids).execute(),
    services.db.selectFrom('members').selectAll().where('app_id', '=', w.app.id).where('guid', '=', guid).where('uid', 'in', uids).execute(),
  ])
  const userOf = new Map(users.filter((u) => u.deactivated_at === null).map((u) => [u.uid, u]))
  const rowOf = new Map(rows.map((r) => [r.uid, r]))
  let vacancies = w.app.settings.maxMembersPerGroup - (await memberCount(services.db, w.app.id, guid))
  const outcomes = new Map<string, Outcome>()
  const added: Record<string, unknown> = {}
  const banned: Record<string, unknown> = {}
  for (const { uid, list } of wanted) {
    const user = userOf.get(uid)
    const row = rowOf.get(uid)
    let error: ItemError | undefined
    if (!user) {
      error = itemError('ERR_UID_NOT_FOUND', `The user ${uid} does not exist or is deactivated.`)
    } else if (list === 'usersToBan') {
      error = row?.is_banned ? itemError('ERR_ALREADY_BANNED', `The user ${uid} is already banned from the group ${guid}.`) : undefined
    } else if (row?.is_banned) {
      error = itemError('ERR_BANNED_GROUPMEMBER', `The user ${uid} is banned from the group ${guid}.`)
    } else if (row) {
      error = itemError('ERR_ALREADY_JOINED', `The user ${uid} has already joined the group ${guid}.`)
    } else if (vacancies <= 0) {
      error = itemError('ERR_NO_VACANCY', `The group ${guid} is full.`)
    }
    if (error !== undefined || !user) {
      outcomes.set(uid, { ok: false, error: error as ItemError })
      continue
    }
    const scope = list === 'usersToBan' ? (row?.scope ?? 'participant') : SCOPE_OF[list]
    if (list !== 'usersToBan') {
      vacancies--
    } else if (row) {
      vacancies++
    }
    await services.db
      .insertInto('members')
      .values({
        app_id: w.app.id,
        guid,
        uid,
        scope,
        is_banned: list === 'usersToBan',
        joined_at: row?.joined_at ?? w.nowSeconds,
        created_at: w.nowSeconds,
      })
      .onConflict((oc) => oc.columns(['app_id', 'guid', 'uid']).doUpdateSet({ is_banned: true }))
      .execute()
    const u = userObject(user)
    ;(list === 'usersToBan' ? banned : added)[uid] = { ...u, scope }
    outcomes.set(uid, list === 'usersToBan' ? { ok: true } : { ok: true, action: addedAction(group, u, w.nowSeconds) })
  }
  return answer(services, w, group, wanted, outcomes, { added, banned })
}

async function answer(
  services: SandboxServices,
  w: ChatWrite,
  group: GroupRow,
  wanted: { uid: string; list: AddMemberList }[],
  outcomes: Map<string, Outcome>,
  changed: { added: Record<string, unknown>; banned: Record<string, unknown> },
) {
  const data: Partial<Record<AddMemberList, Record<string, unknown>>> = {}
  for (const { uid, list } of wanted) {
    const o = outcomes.get(uid) as Outcome
    ;(data[list] ??= {})[uid] = o.ok ? { success: true, ...(o.action ? { data: o.action } : {}) } : { success: false, error: o.error }
    w.items.push({ key: memberKey(group.guid, uid), result: o.ok ? 'applied' : 'refused', ...(o.ok ? {} : { code: o.error.code }) })
  }
  const groupData = groupObject(group, await memberCount(services.db, w.app.id, group.guid))
  if (Object.keys(changed.added).length > 0) {
    w.events.push({ trigger: 'group_member_added', data: { group: groupData, members: changed.added, by: APP_SYSTEM } })
  }
  if (Object.keys(changed.banned).length > 0) {
    w.events.push({ trigger: 'group_member_banned', data: { group: groupData, members: changed.banned, by: APP_SYSTEM } })
  }
  return { status: 200, body: { data } }
}

function keysOf(ctx: RequestContext): string[] {
  const guid = idParam(ctx, 'guid')
  const parsed = AddBody.safeParse(jsonBody(ctx))
  return parsed.success ? resolveLists(parsed.data).map(({ uid }) => memberKey(guid, uid)) : []
}

export function memberAddSpec(services: SandboxServices): ChatWriteSpec {
  return { method: 'POST', path: 'groups/:guid/members', endpoint: 'members.add', keysOf, handler: (ctx, w) => addMembers(services, ctx, w) }
}
