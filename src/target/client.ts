/**
 * Typed clients for the platform's three REST interfaces: data import and chat (per app, header
 * `apikey`) and management (account level, headers `key`/`secret`). One function per operation,
 * zod-validated bodies both ways, {@link PlatformError} for every failure.
 */
import { z } from 'zod'

import { type ChatWrites, createChatWrites } from './chat-writes.ts'
import { itemErrorOf, PlatformError } from './errors.ts'
import { type RateLimitInfo, requestJson } from './http.ts'
import {
  type CollaboratorRecord,
  type CollaboratorResult,
  type ExtensionRecord,
  type ExtensionResult,
  ListCollaboratorsResponse,
  ListExtensionsResponse,
  SetCollaboratorsRequest,
  SetCollaboratorsResponse,
  SetExtensionsRequest,
  SetExtensionsResponse,
} from './management-schemas.ts'
import {
  AppRecord,
  type ChatGroup,
  type ChatMember,
  type ChatMessage,
  type ChatUser,
  CreateAppRequest,
  CreateAppResponse,
  DeleteAppResponse,
  type Entity,
  GroupsPage,
  IMPORT_ITEM_SCHEMAS,
  type ImportItemOf,
  importKey,
  ImportResponse,
  LIMITS,
  ListAppsResponse,
  MembersPage,
  MessagesPage,
  UsersPage,
} from './schemas.ts'
import {
  AddTriggersResponse,
  type CreateWebhookInput,
  CreateWebhookRequest,
  DeleteWebhookResponse,
  ListTriggersResponse,
  ListWebhooksResponse,
  parseWebhookInput,
  RemoveTriggersResponse,
  UpdateWebhookRequest,
  WEBHOOK_VERSION_HEADER,
  WebhookAnswer,
  WebhookId,
  webhookOfAnswer,
  type WebhookRecord,
  WebhookTriggersRequest,
} from './webhooks.ts'

export const DEFAULT_TIMEOUT_MS = 30_000

// ─── data import + chat ──────────────────────────────────────────────────────────────────────────

export interface PlatformClientOptions {
  /** e.g. `https://myapp.api-us.cometchat.io/v3`, or the sandbox's `http://127.0.0.1:4010/apps/myapp/v3`. */
  readonly baseUrl: string
  /** REST API key with fullAccess scope. */
  readonly apiKey: string
  /** @default 30000 */
  readonly timeoutMs?: number
}

/** The platform's verdict on one item of an import request. */
export type ItemResult = { readonly ok: true; readonly data?: unknown } | { readonly ok: false; readonly code: string; readonly message: string }

export interface ImportResult {
  readonly status: number
  /** Keyed by the map key we sent (uid, guid, memberId, muid). */
  readonly results: Map<string, ItemResult>
  /** Keys we sent that the answer said nothing about: their fate is unknown, send them again. */
  readonly missing: readonly string[]
  readonly rateLimit: RateLimitInfo
}

export interface PageQuery {
  /** @default 1 */
  page?: number
  /** 1–1000. @default 100 */
  perPage?: number
}

export interface UserQuery extends PageQuery {
  /** Include deactivated users (the list leaves them out by default). */
  withDeactivated?: boolean
  onlyDeactivated?: boolean
}

export interface MessageQuery {
  /** 1–1000. @default 10 (the platform's default) */
  limit?: number
  affix?: 'append' | 'prepend'
  id?: string
  sentAt?: number
  receiverType?: 'user' | 'group'
  conversationId?: string
  sender?: string
  fromTimestamp?: number
  toTimestamp?: number
  /** Leave soft-deleted messages out (documented filter). */
  hideDeleted?: boolean
  /** Only soft-deleted messages (documented filter). */
  onlyDeleted?: boolean
}

/** Paths of the data-import endpoints below the base URL. */
export const IMPORT_PATHS: Record<Entity, string> = {
  users: 'data_import/users',
  groups: 'data_import/groups',
  members: 'data_import/members',
  messages: 'data_import/messages',
}

/**
 * Turns an import answer into one result per key we sent. Documented variants handled
 * (facts §1.2, §1.5): results keyed by our key; the older response keyed by the platform's message
 * id, matched through the inner `data.muid`; success data nested one level deeper (`data.data`).
 */
export function parseImportResults(
  entity: Entity,
  sentKeys: readonly string[],
  body: ImportResponse,
): { results: Map<string, ItemResult>; missing: string[] } {
  const results = new Map<string, ItemResult>()
  const wanted = new Set(sentKeys)
  const lower = new Map(sentKeys.map((k) => [k.toLowerCase(), k]))
  for (const [rawKey, value] of Object.entries(body.data)) {
    let key: string | undefined = wanted.has(rawKey) ? rawKey : lower.get(rawKey.toLowerCase())
    if (key === undefined && entity === 'messages') {
      const inner = value.data as { muid?: unknown; data?: { muid?: unknown } } | undefined
      const muid = typeof inner?.muid === 'string' ? inner.muid : typeof inner?.data?.muid === 'string' ? inner.data.muid : undefined
      if (muid !== undefined) {
        key = wanted.has(muid) ? muid : lower.get(muid.toLowerCase())
      }
    }
    if (key === undefined) {
      continue
    }
    if (value.success) {
      results.set(key, value.data === undefined ? { ok: true } : { ok: true, data: value.data })
    } else {
      const { code, message } = itemErrorOf(value.error)
      results.set(key, { ok: false, code, message })
    }
  }
  return { results, missing: sentKeys.filter((k) => !results.has(k)) }
}

/** The data-import interface, the chat reads and (from {@link ChatWrites}) the chat writes of a delta run. */
export interface PlatformClient extends ChatWrites {
  readonly baseUrl: string
  importUsers(items: readonly ImportItemOf['users'][], signal?: AbortSignal): Promise<ImportResult>
  importGroups(items: readonly ImportItemOf['groups'][], signal?: AbortSignal): Promise<ImportResult>
  importMembers(items: readonly ImportItemOf['members'][], signal?: AbortSignal): Promise<ImportResult>
  importMessages(items: readonly ImportItemOf['messages'][], signal?: AbortSignal): Promise<ImportResult>
  /** The four above, by entity name. */
  importItems<E extends Entity>(entity: E, items: readonly ImportItemOf[E][], signal?: AbortSignal): Promise<ImportResult>
  /**
   * Sends an already-built body as is (the loader keeps payloads as stored JSON); `keys` are the
   * map keys it holds, in order.
   */
  importRaw(entity: Entity, keys: readonly string[], body: string | object, signal?: AbortSignal): Promise<ImportResult>
  listUsers(query?: UserQuery, signal?: AbortSignal): Promise<z.output<typeof UsersPage>>
  listGroups(query?: PageQuery, signal?: AbortSignal): Promise<z.output<typeof GroupsPage>>
  listGroupMembers(guid: string, query?: PageQuery, signal?: AbortSignal): Promise<z.output<typeof MembersPage>>
  /** Banned members are not in the member list; they are listed here (`GET /groups/{guid}/bannedusers`). */
  listBannedUsers(guid: string, query?: PageQuery, signal?: AbortSignal): Promise<z.output<typeof MembersPage>>
  listMessages(query?: MessageQuery, signal?: AbortSignal): Promise<z.output<typeof MessagesPage>>
  /** Every user, page after page (deactivated ones too when `withDeactivated`). */
  users(perPage?: number, signal?: AbortSignal, options?: { withDeactivated?: boolean }): AsyncGenerator<ChatUser>
  groups(perPage?: number, signal?: AbortSignal): AsyncGenerator<ChatGroup>
  groupMembers(guid: string, perPage?: number, signal?: AbortSignal): AsyncGenerator<ChatMember>
  bannedUsers(guid: string, perPage?: number, signal?: AbortSignal): AsyncGenerator<ChatMember>
  /** Every message matching `query`, oldest first, following `meta.next`. */
  messages(query?: Omit<MessageQuery, 'affix' | 'id' | 'sentAt'>, signal?: AbortSignal): AsyncGenerator<ChatMessage>
}

export function createPlatformClient(options: PlatformClientOptions): PlatformClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, '')
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS
  const headers = { apikey: options.apiKey }

  async function importRaw(entity: Entity, keys: readonly string[], body: string | object, signal?: AbortSignal) {
    if (keys.length > LIMITS.IMPORT_ITEMS_MAX) {
      throw new RangeError(`Expected at most ${LIMITS.IMPORT_ITEMS_MAX} items per import request, got ${keys.length}`)
    }
    const res = await requestJson(
      {
        operation: `data_import.${entity}`,
        method: 'POST',
        url: `${baseUrl}/${IMPORT_PATHS[entity]}`,
        headers,
        // JSON text (the ledger's payloads) goes out as is: no parse and stringify per request.
        ...(typeof body === 'string' ? { rawBody: body } : { body }),
        timeoutMs,
        ...(signal ? { signal } : {}),
      },
      ImportResponse,
    )
    const { results, missing } = parseImportResults(entity, keys, res.body)
    return { status: res.status, results, missing, rateLimit: res.rateLimit }
  }

  async function importItems<E extends Entity>(entity: E, items: readonly ImportItemOf[E][], signal?: AbortSignal) {
    const map: Record<string, unknown> = {}
    const keys: string[] = []
    for (const [i, item] of items.entries()) {
      const checked = IMPORT_ITEM_SCHEMAS[entity].safeParse(item)
      if (!checked.success) {
        const issue = checked.error.issues[0]
        throw new TypeError(`${entity}[${i}] is not a valid import item: ${issue?.path.join('.') || '(item)'}: ${issue?.message ?? 'invalid'}`)
      }
      const key = importKey(entity, item)
      if (key in map) {
        throw new TypeError(`${entity}: the key ${key} appears twice in one request`)
      }
      map[key] = item
      keys.push(key)
    }
    return importRaw(entity, keys, { [entity]: map }, signal)
  }

  function get<S extends z.ZodType>(operation: string, path: string, query: object, schema: S, signal?: AbortSignal) {
    const params = new URLSearchParams()
    for (const [k, v] of Object.entries(query)) {
      if (v !== undefined) {
        params.set(k, String(v))
      }
    }
    const qs = params.toString()
    return requestJson(
      {
        operation,
        method: 'GET',
        url: `${baseUrl}/${path}${qs ? `?${qs}` : ''}`,
        headers,
        timeoutMs,
        ...(signal ? { signal } : {}),
      },
      schema,
    ).then((r) => r.body)
  }

  async function* pages<T>(
    fetchPage: (page: number) => Promise<{ data: T[]; meta: { pagination: { total_pages: number; current_page: number } } }>,
    perPage: number,
  ) {
    for (let page = 1; ; page++) {
      const res = await fetchPage(page)
      yield* res.data
      // `total` is not to be trusted (facts §5: an example shows total 0 with count 5); a short
      // page is the end, and so is the last page by number.
      if (res.data.length < perPage || res.meta.pagination.current_page >= res.meta.pagination.total_pages) {
        return
      }
    }
  }

  const client: PlatformClient = {
    ...createChatWrites({ baseUrl, apiKey: options.apiKey, timeoutMs }),
    baseUrl,
    importUsers: (items, signal) => importItems('users', items, signal),
    importGroups: (items, signal) => importItems('groups', items, signal),
    importMembers: (items, signal) => importItems('members', items, signal),
    importMessages: (items, signal) => importItems('messages', items, signal),
    importItems,
    importRaw,
    listUsers: (query = {}, signal) => get('chat.listUsers', 'users', query, UsersPage, signal),
    listGroups: (query = {}, signal) => get('chat.listGroups', 'groups', query, GroupsPage, signal),
    listGroupMembers: (guid, query = {}, signal) =>
      get('chat.listGroupMembers', `groups/${encodeURIComponent(guid)}/members`, query, MembersPage, signal),
    listBannedUsers: (guid, query = {}, signal) =>
      get('chat.listBannedUsers', `groups/${encodeURIComponent(guid)}/bannedusers`, query, MembersPage, signal),
    listMessages: (query = {}, signal) => get('chat.listMessages', 'messages', query, MessagesPage, signal),
    users: (perPage = 1000, signal, options = {}) => pages((page) => client.listUsers({ page, perPage, ...options }, signal), perPage),
    groups: (perPage = 1000, signal) => pages((page) => client.listGroups({ page, perPage }, signal), perPage),
    groupMembers: (guid, perPage = 1000, signal) => pages((page) => client.listGroupMembers(guid, { page, perPage }, signal), perPage),
    bannedUsers: (guid, perPage = 1000, signal) => pages((page) => client.listBannedUsers(guid, { page, perPage }, signal), perPage),
    async *messages(query = {}, signal) {
      const limit = query.limit ?? 1000
      let cursor: { id?: string; sentAt?: number } = {}
      for (;;) {
        const res = await client.listMessages({ ...query, limit, affix: 'append', ...cursor }, signal)
        yield* res.data
        const next = res.meta.next
        if (res.data.length === 0 || next === undefined || (next.id === undefined && next.sentAt === undefined)) {
          return
        }
        if (next.id === cursor.id && next.sentAt === cursor.sentAt) {
          throw new PlatformError({
            operation: 'chat.listMessages',
            kind: 'invalid-response',
            code: 'INVALID_RESPONSE',
            message: 'the message cursor did not advance',
          })
        }
        cursor = {
          ...(next.id !== undefined ? { id: next.id } : {}),
          ...(next.sentAt !== undefined ? { sentAt: next.sentAt } : {}),
        }
      }
    },
  }
  return client
}

// ─── management ─────────────────────────────────────────────────────────────────────────────────

export interface ManagementClientOptions {
  /** @default https://apimgmt.cometchat.io */
  readonly url: string
  readonly key: string
  readonly secret: string
  readonly timeoutMs?: number
}

export interface CreatedApp {
  /** The App ID (the response's `data.id`). */
  readonly appId: string
  readonly region: string
  /** The key of scope `fullAccess` from the response's `apiKeys` map: the one data import needs. */
  readonly restApiKey: string
  readonly record: AppRecord
}

export interface ManagementClient {
  createApp(request: CreateAppRequest, signal?: AbortSignal): Promise<CreatedApp>
  listApps(query?: { searchKey?: string; perPage?: number; page?: number }, signal?: AbortSignal): Promise<AppRecord[]>
  deleteApp(appId: string, signal?: AbortSignal): Promise<{ success: boolean; scheduledToDeleteAt?: number }>
  /** The extensions of an app (`GET /apps/{appId}/extensions`). */
  listExtensions(appId: string, signal?: AbortSignal): Promise<ExtensionRecord[]>
  /** Enables and disables extensions; per id, whether it worked. */
  setExtensions(
    appId: string,
    request: SetExtensionsRequest,
    signal?: AbortSignal,
  ): Promise<{ enabled: Map<string, ExtensionResult>; disabled: Map<string, ExtensionResult> }>
  /** The team members (collaborators) of an app. */
  listCollaborators(appId: string, signal?: AbortSignal): Promise<CollaboratorRecord[]>
  /** Adds admins and moderators and removes members, by email; per role and email, whether it worked. */
  setCollaborators(appId: string, request: SetCollaboratorsRequest, signal?: AbortSignal): Promise<Map<string, Map<string, CollaboratorResult>>>
  /** Webhooks (all with `X-Webhook-Version: 2`; input checked before anything is sent: {@link WebhookInputError}). */
  listWebhooks(appId: string, query?: { perPage?: number; page?: number; searchKey?: string }, signal?: AbortSignal): Promise<WebhookRecord[]>
  getWebhook(appId: string, webhookId: string, signal?: AbortSignal): Promise<WebhookRecord>
  createWebhook(appId: string, webhook: CreateWebhookInput, signal?: AbortSignal): Promise<WebhookRecord>
  updateWebhook(appId: string, webhookId: string, changes: z.input<typeof UpdateWebhookRequest>, signal?: AbortSignal): Promise<WebhookRecord>
  deleteWebhook(appId: string, webhookId: string, signal?: AbortSignal): Promise<{ success: boolean; message?: string }>
  /** Per trigger id: whether it was added (and why not). */
  addWebhookTriggers(
    appId: string,
    webhookId: string,
    triggerIds: readonly string[],
    signal?: AbortSignal,
  ): Promise<Map<string, { success: boolean; message?: string; code?: string }>>
  listWebhookTriggers(appId: string, webhookId: string, signal?: AbortSignal): Promise<{ id: string; description?: string }[]>
  removeWebhookTriggers(
    appId: string,
    webhookId: string,
    triggerIds: readonly string[],
    signal?: AbortSignal,
  ): Promise<{ success: boolean; message?: string }>
}

const webhooksPath = (appId: string) => `/apps/${encodeURIComponent(appId)}/webhooks`
/** The path of one webhook; an id the platform would refuse is refused here, before any request. */
function webhookPath(operation: string, appId: string, webhookId: string): string {
  const id = parseWebhookInput(`management.${operation}`, WebhookId, webhookId, ['id'])
  return `${webhooksPath(appId)}/${encodeURIComponent(id)}`
}

export function createManagementClient(options: ManagementClientOptions): ManagementClient {
  const url = options.url.replace(/\/+$/, '')
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS
  const headers = { key: options.key, secret: options.secret }
  const call = <S extends z.ZodType>(
    operation: string,
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    path: string,
    schema: S,
    body?: unknown,
    signal?: AbortSignal,
  ) =>
    requestJson(
      {
        operation: `management.${operation}`,
        method,
        url: `${url}${path}`,
        headers: path.includes('/webhooks') ? { ...headers, [WEBHOOK_VERSION_HEADER]: '2' } : headers,
        timeoutMs,
        ...(body !== undefined ? { body } : {}),
        ...(signal ? { signal } : {}),
      },
      schema,
    ).then((r) => r.body)

  return {
    async createApp(request, signal) {
      const body = CreateAppRequest.parse(request)
      const res = await call('createApp', 'POST', '/apps', CreateAppResponse, body, signal)
      const full = Object.values(res.data.apiKeys ?? {}).find((k) => k.scope === 'fullAccess')
      if (!full) {
        throw new PlatformError({
          operation: 'management.createApp',
          kind: 'invalid-response',
          code: 'INVALID_RESPONSE',
          message: 'the created app has no API key of scope fullAccess',
        })
      }
      return { appId: res.data.id, region: res.data.region, restApiKey: full.apiKey, record: res.data }
    },
    async listApps(query = {}, signal) {
      const params = new URLSearchParams()
      for (const [k, v] of Object.entries(query)) {
        if (v !== undefined) {
          params.set(k, String(v))
        }
      }
      const qs = params.toString()
      const res = await call('listApps', 'GET', `/apps${qs ? `?${qs}` : ''}`, ListAppsResponse, undefined, signal)
      return res.data
    },
    async deleteApp(appId, signal) {
      const res = await call('deleteApp', 'DELETE', `/apps/${encodeURIComponent(appId)}`, DeleteAppResponse, undefined, signal)
      return res.data
    },
    async listExtensions(appId, signal) {
      return (await call('listExtensions', 'GET', `/apps/${encodeURIComponent(appId)}/extensions`, ListExtensionsResponse, undefined, signal)).data
    },
    async setExtensions(appId, request, signal) {
      const body = SetExtensionsRequest.parse(request)
      const res = await call('setExtensions', 'POST', `/apps/${encodeURIComponent(appId)}/extensions`, SetExtensionsResponse, body, signal)
      return { enabled: new Map(Object.entries(res.data.enabled ?? {})), disabled: new Map(Object.entries(res.data.disabled ?? {})) }
    },
    async listCollaborators(appId, signal) {
      return (
        await call('listCollaborators', 'GET', `/apps/${encodeURIComponent(appId)}/collaborators`, ListCollaboratorsResponse, undefined, signal)
      ).data
    },
    async setCollaborators(appId, request, signal) {
      const body = SetCollaboratorsRequest.parse(request)
      const res = await call('setCollaborators', 'POST', `/apps/${encodeURIComponent(appId)}/collaborators`, SetCollaboratorsResponse, body, signal)
      const out = new Map<string, Map<string, CollaboratorResult>>()
      for (const role of ['admins', 'moderators', 'developers', 'collaboratorsToRemove'] as const) {
        out.set(role, new Map(Object.entries(res.data[role] ?? {})))
      }
      return out
    },
    async listWebhooks(appId, query = {}, signal) {
      const params = new URLSearchParams()
      for (const [k, v] of Object.entries(query)) {
        if (v !== undefined) {
          params.set(k, String(v))
        }
      }
      const qs = params.toString()
      const res = await call('listWebhooks', 'GET', `${webhooksPath(appId)}${qs ? `?${qs}` : ''}`, ListWebhooksResponse, undefined, signal)
      return res.data
    },
    async getWebhook(appId, webhookId, signal) {
      const path = webhookPath('getWebhook', appId, webhookId)
      return webhookOfAnswer(await call('getWebhook', 'GET', path, WebhookAnswer, undefined, signal))
    },
    async createWebhook(appId, webhook, signal) {
      const body = parseWebhookInput('management.createWebhook', CreateWebhookRequest, webhook)
      return webhookOfAnswer(await call('createWebhook', 'POST', webhooksPath(appId), WebhookAnswer, body, signal))
    },
    async updateWebhook(appId, webhookId, changes, signal) {
      const path = webhookPath('updateWebhook', appId, webhookId)
      const body = parseWebhookInput('management.updateWebhook', UpdateWebhookRequest, changes)
      return webhookOfAnswer(await call('updateWebhook', 'PUT', path, WebhookAnswer, body, signal))
    },
    async deleteWebhook(appId, webhookId, signal) {
      const path = webhookPath('deleteWebhook', appId, webhookId)
      return (await call('deleteWebhook', 'DELETE', path, DeleteWebhookResponse, undefined, signal)).data
    },
    async addWebhookTriggers(appId, webhookId, triggerIds, signal) {
      const path = `${webhookPath('addWebhookTriggers', appId, webhookId)}/triggers`
      const body = parseWebhookInput('management.addWebhookTriggers', WebhookTriggersRequest, { triggerIds })
      const res = await call('addWebhookTriggers', 'POST', path, AddTriggersResponse, body, signal)
      const out = new Map<string, { success: boolean; message?: string; code?: string }>()
      for (const [id, r] of Object.entries(res.data)) {
        const message = r.message ?? r.error?.message
        out.set(id, { success: r.success, ...(message !== undefined ? { message } : {}), ...(r.error ? { code: r.error.code } : {}) })
      }
      return out
    },
    async listWebhookTriggers(appId, webhookId, signal) {
      const path = `${webhookPath('listWebhookTriggers', appId, webhookId)}/triggers`
      return (await call('listWebhookTriggers', 'GET', path, ListTriggersResponse, undefined, signal)).data
    },
    async removeWebhookTriggers(appId, webhookId, triggerIds, signal) {
      const path = `${webhookPath('removeWebhookTriggers', appId, webhookId)}/triggers`
      const body = parseWebhookInput('management.removeWebhookTriggers', WebhookTriggersRequest, { triggerIds })
      return (await call('removeWebhookTriggers', 'DELETE', path, RemoveTriggersResponse, body, signal)).data
    },
  }
}
