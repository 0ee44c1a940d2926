/**
 * The chat interface's write calls a delta run makes (issue 13), and the single reads that settle
 * an ambiguous write after a crash. Part of {@link PlatformClient} (client.ts composes it). Every
 * body is checked against its schema before anything is sent (a `TypeError` naming the field);
 * every failure of the call is a {@link PlatformError} with the HTTP status and the platform's code.
 * Paths, bodies and answers: `chat-write-schemas.ts` (cometchat/docs `chat-apis.json`).
 */
import { z } from 'zod'

import {
  actedOnMessage,
  ADD_MEMBER_LISTS,
  type AddMemberList,
  AddMembersAnswer,
  AddMembersRequest,
  ChangeScopeAnswer,
  ChangeScopeRequest,
  DeactivateUsersAnswer,
  DeactivateUsersRequest,
  DeleteMessageRequest,
  GroupAnswer,
  GroupUpdate,
  MessageActionAnswer,
  MessageAnswer,
  MessageUpdate,
  ReactivateUsersAnswer,
  ReactivateUsersRequest,
  SuccessAnswer,
  UserAnswer,
  UserUpdate,
} from './chat-write-schemas.ts'
import { itemErrorOf, PlatformError } from './errors.ts'
import { requestJson } from './http.ts'
import { type ChatGroup, type ChatMember, type ChatMessage, type ChatUser, type MemberScope, MembersPage, PlatformId, UsersPage } from './schemas.ts'

/** What each uid of a deactivate/reactivate call became: changed by it, or left as it was. */
export interface UsersStateResult {
  /** Uids the answer lists: the call changed them. */
  readonly changed: readonly string[]
  /** Uids sent but not listed: already in that state (or the platform left them for another reason). */
  readonly unchanged: readonly string[]
}

/** One uid of an add-members call. */
export type MemberResult =
  | { readonly ok: true; readonly list: AddMemberList }
  | { readonly ok: false; readonly list: AddMemberList; readonly code: string; readonly message: string }

export interface AddMembersResult {
  /** Per uid sent. */
  readonly results: Map<string, MemberResult>
  /** Uids sent that the answer said nothing about. */
  readonly missing: readonly string[]
}

/** A message edit or delete: the action message the platform answers, and the message acted on (when the answer carries it). */
export interface MessageActionResult {
  readonly action: ChatMessage
  readonly message: ChatMessage | undefined
}

/** Where a uid stands in a group: a member with a scope, banned, or neither. */
export type GroupMembership =
  { readonly state: 'member'; readonly member: ChatMember } | { readonly state: 'banned'; readonly member: ChatMember } | { readonly state: 'none' }

export interface ChatWrites {
  /** `PUT /users/{uid}`. */
  updateUser(uid: string, body: UserUpdate, signal?: AbortSignal): Promise<ChatUser>
  /** `DELETE /users` `{uidsToDeactivate}`. */
  deactivateUsers(uids: readonly string[], signal?: AbortSignal): Promise<UsersStateResult>
  /** `PUT /users` `{uidsToActivate}`. */
  reactivateUsers(uids: readonly string[], signal?: AbortSignal): Promise<UsersStateResult>
  /** `PUT /groups/{guid}`; with `onBehalfOf` the platform ignores `owner`. */
  updateGroup(guid: string, body: GroupUpdate, options?: { onBehalfOf?: string }, signal?: AbortSignal): Promise<ChatGroup>
  /** `DELETE /groups/{guid}`: the group and its history go. */
  deleteGroup(guid: string, signal?: AbortSignal): Promise<void>
  /** `POST /groups/{guid}/members`, at most 25 uids over all lists; per-uid results. */
  addMembers(guid: string, lists: AddMembersRequest, signal?: AbortSignal): Promise<AddMembersResult>
  /** `PUT /groups/{guid}/members/{uid}` `{scope}`. */
  changeMemberScope(guid: string, uid: string, scope: MemberScope, signal?: AbortSignal): Promise<{ scope: string; joinedAt?: number }>
  /** `DELETE /groups/{guid}/members/{uid}`. */
  kickMember(guid: string, uid: string, signal?: AbortSignal): Promise<void>
  /** `POST /groups/{guid}/bannedusers/{uid}`. */
  banMember(guid: string, uid: string, signal?: AbortSignal): Promise<void>
  /** `DELETE /groups/{guid}/bannedusers/{uid}`. */
  unbanMember(guid: string, uid: string, signal?: AbortSignal): Promise<void>
  /**
   * `PUT /messages/{id}` on behalf of the sender (only the sender may edit: `ERR_MESSAGE_NOT_A_SENDER`).
   * `onBehalfOf` undefined: the app edits (`editedBy: app_system`, documented) — the way left when the
   * sender is deactivated (a deactivated `onBehalfOf` answers `ERR_UID_NOT_FOUND`).
   */
  updateMessage(id: string, body: MessageUpdate, onBehalfOf: string | undefined, signal?: AbortSignal): Promise<MessageActionResult>
  /** `DELETE /messages/{id}` `{permanent}` on behalf of the sender (undefined: the app deletes). */
  deleteMessage(id: string, onBehalfOf: string | undefined, options?: { permanent?: boolean }, signal?: AbortSignal): Promise<MessageActionResult>
  /** `GET /users/{uid}`; a deactivated user answers `ERR_UID_NOT_FOUND` (documented): see {@link findUser}. */
  getUser(uid: string, signal?: AbortSignal): Promise<ChatUser>
  /** The user, deactivated or not (`GET /users?searchKey=uid&withDeactivated=true`), or undefined. */
  findUser(uid: string, signal?: AbortSignal): Promise<ChatUser | undefined>
  /** `GET /groups/{guid}`. */
  getGroup(guid: string, signal?: AbortSignal): Promise<ChatGroup>
  /** `GET /messages/{id}`: soft-deleted messages carry `deletedAt`/`deletedBy`, edited ones `editedAt`/`editedBy`. */
  getMessage(id: string, signal?: AbortSignal): Promise<ChatMessage>
  /**
   * Where `uid` stands in the group: no single-member read is documented, so the member list and
   * then the banned list are paged (1000 a page) until the uid is found — up to ⌈members/1000⌉ +
   * ⌈banned/1000⌉ requests in one call: a caller pacing chat calls should count them (it is meant
   * for the rare ambiguous update after a crash, not for every update).
   */
  findGroupMember(guid: string, uid: string, signal?: AbortSignal): Promise<GroupMembership>
}

export interface ChatWritesOptions {
  readonly baseUrl: string
  readonly apiKey: string
  readonly timeoutMs: number
}

/** Validates a request body; a bad one is a TypeError naming the call and the field (nothing is sent). */
function checked<S extends z.ZodType>(operation: string, schema: S, body: unknown): z.output<S> {
  const r = schema.safeParse(body)
  if (!r.success) {
    const problems = r.error.issues.map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`)
    throw new TypeError(`${operation}: refused before sending: ${problems.join('; ')}`)
  }
  return r.data
}

const seg = encodeURIComponent

/** The `onBehalfOf` header: a uid. */
const OnBehalfOf = z.object({ onBehalfOf: PlatformId })

export function createChatWrites(options: ChatWritesOptions): ChatWrites {
  const { baseUrl, timeoutMs } = options

  function call<S extends z.ZodType>(
    operation: string,
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    path: string,
    schema: S,
    extra: { body?: unknown; onBehalfOf?: string | undefined; signal?: AbortSignal | undefined } = {},
  ): Promise<z.output<S>> {
    const headers: Record<string, string> = { apikey: options.apiKey }
    if (extra.onBehalfOf !== undefined) {
      headers.onBehalfOf = extra.onBehalfOf
    }
    return requestJson(
      {
        operation: `chat.${operation}`,
        method,
        url: `${baseUrl}/${path}`,
        headers,
        timeoutMs,
        ...(extra.body !== undefined ? { body: extra.body } : {}),
        ...(extra.signal ? { signal: extra.signal } : {}),
      },
      schema,
    ).then((r) => r.body)
  }

  /** A `{data: {success}}` answer; `success: false` in a 2xx is a failure too. */
  async function succeed(operation: string, method: 'POST' | 'DELETE', path: string, signal?: AbortSignal): Promise<void> {
    const res = await call(operation, method, path, SuccessAnswer, { signal })
    if (!res.data.success) {
      throw new PlatformError({
        operation: `chat.${operation}`,
        kind: 'invalid-response',
        status: 200,
        code: 'UNSUCCESSFUL',
        message: res.data.message ?? 'the platform answered success: false',
      })
    }
  }

  function usersState(sent: readonly string[], listed: readonly string[]): UsersStateResult {
    const got = new Set(listed.map((u) => u.toLowerCase()))
    return { changed: sent.filter((u) => got.has(u)), unchanged: sent.filter((u) => !got.has(u)) }
  }

  async function messageAction(
    operation: string,
    method: 'PUT' | 'DELETE',
    id: string,
    body: unknown,
    onBehalfOf: string | undefined,
    signal?: AbortSignal,
  ) {
    if (onBehalfOf !== undefined) {
      checked(`chat.${operation}`, OnBehalfOf, { onBehalfOf })
    }
    const res = await call(operation, method, `messages/${seg(id)}`, MessageActionAnswer, { body, onBehalfOf, signal })
    return { action: res.data, message: actedOnMessage(res.data) }
  }

  async function* listed(path: string, signal?: AbortSignal): AsyncGenerator<ChatMember> {
    for (let page = 1; ; page++) {
      const res = await call('listGroupMembers', 'GET', `${path}?perPage=1000&page=${page}`, MembersPage, { signal })
      yield* res.data
      if (res.data.length < 1000 || res.meta.pagination.current_page >= res.meta.pagination.total_pages) {
        return
      }
    }
  }

  return {
    async updateUser(uid, body, signal) {
      const b = checked('chat.updateUser', UserUpdate, body)
      return (await call('updateUser', 'PUT', `users/${seg(uid)}`, UserAnswer, { body: b, signal })).data
    },
    async deactivateUsers(uids, signal) {
      const b = checked('chat.deactivateUsers', DeactivateUsersRequest, { uidsToDeactivate: [...uids] })
      const res = await call('deactivateUsers', 'DELETE', 'users', DeactivateUsersAnswer, { body: b, signal })
      return usersState(b.uidsToDeactivate, res.data.deactivatedUids)
    },
    async reactivateUsers(uids, signal) {
      const b = checked('chat.reactivateUsers', ReactivateUsersRequest, { uidsToActivate: [...uids] })
      const res = await call('reactivateUsers', 'PUT', 'users', ReactivateUsersAnswer, { body: b, signal })
      return usersState(b.uidsToActivate, [...(res.data.nonDeactivatedUids ?? []), ...(res.data.reactivatedUids ?? [])])
    },
    async updateGroup(guid, body, opts = {}, signal) {
      const b = checked('chat.updateGroup', GroupUpdate, body)
      return (await call('updateGroup', 'PUT', `groups/${seg(guid)}`, GroupAnswer, { body: b, onBehalfOf: opts.onBehalfOf, signal })).data
    },
    deleteGroup: (guid, signal) => succeed('deleteGroup', 'DELETE', `groups/${seg(guid)}`, signal),
    async addMembers(guid, lists, signal) {
      const b = checked('chat.addMembers', AddMembersRequest, lists)
      const res = await call('addMembers', 'POST', `groups/${seg(guid)}/members`, AddMembersAnswer, { body: b, signal })
      const results = new Map<string, MemberResult>()
      for (const list of ADD_MEMBER_LISTS) {
        for (const [uid, r] of Object.entries(res.data[list] ?? {})) {
          results.set(uid.toLowerCase(), r.success ? { ok: true, list } : { ok: false, list, ...itemErrorOf(r.error) })
        }
      }
      const sent = ADD_MEMBER_LISTS.flatMap((l) => b[l] ?? [])
      return { results, missing: sent.filter((u) => !results.has(u)) }
    },
    async changeMemberScope(guid, uid, scope, signal) {
      const b = checked('chat.changeMemberScope', ChangeScopeRequest, { scope })
      const res = await call('changeMemberScope', 'PUT', `groups/${seg(guid)}/members/${seg(uid)}`, ChangeScopeAnswer, { body: b, signal })
      return { scope: res.data.scope, ...(res.data.joinedAt !== undefined ? { joinedAt: res.data.joinedAt } : {}) }
    },
    kickMember: (guid, uid, signal) => succeed('kickMember', 'DELETE', `groups/${seg(guid)}/members/${seg(uid)}`, signal),
    banMember: (guid, uid, signal) => succeed('banMember', 'POST', `groups/${seg(guid)}/bannedusers/${seg(uid)}`, signal),
    unbanMember: (guid, uid, signal) => succeed('unbanMember', 'DELETE', `groups/${seg(guid)}/bannedusers/${seg(uid)}`, signal),
    updateMessage(id, body, onBehalfOf, signal) {
      const b = checked('chat.updateMessage', MessageUpdate, body)
      return messageAction('updateMessage', 'PUT', id, b, onBehalfOf, signal)
    },
    deleteMessage(id, onBehalfOf, opts = {}, signal) {
      const b = checked('chat.deleteMessage', DeleteMessageRequest, { permanent: opts.permanent ?? false })
      return messageAction('deleteMessage', 'DELETE', id, b, onBehalfOf, signal)
    },
    async getUser(uid, signal) {
      return (await call('getUser', 'GET', `users/${seg(uid)}`, UserAnswer, { signal })).data
    },
    async findUser(uid, signal) {
      const want = uid.toLowerCase()
      // searchKey is a prefix of uid or name: page on until the uid itself shows up.
      for (let page = 1; ; page++) {
        const q = new URLSearchParams({ searchKey: want, searchIn: 'uid', withDeactivated: 'true', perPage: '1000', page: String(page) })
        const res = await call('findUser', 'GET', `users?${q.toString()}`, UsersPage, { signal })
        const found = res.data.find((u) => u.uid === want)
        if (found !== undefined || res.data.length < 1000 || res.meta.pagination.current_page >= res.meta.pagination.total_pages) {
          return found
        }
      }
    },
    async getGroup(guid, signal) {
      return (await call('getGroup', 'GET', `groups/${seg(guid)}`, GroupAnswer, { signal })).data
    },
    async getMessage(id, signal) {
      return (await call('getMessage', 'GET', `messages/${seg(id)}`, MessageAnswer, { signal })).data
    },
    async findGroupMember(guid, uid, signal) {
      const want = uid.toLowerCase()
      for await (const m of listed(`groups/${seg(guid)}/members`, signal)) {
        if (m.uid === want) {
          return { state: 'member', member: m }
        }
      }
      for await (const m of listed(`groups/${seg(guid)}/bannedusers`, signal)) {
        if (m.uid === want) {
          return { state: 'banned', member: m }
        }
      }
      return { state: 'none' }
    },
  }
}
