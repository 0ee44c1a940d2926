/**
 * `plan --check-target`: a read-only pre-flight against the platform through the chat interface's
 * list endpoints (paced by the app's shared chat budget, `src/load/chat-budget.ts`). It checks that the apiKey works and has full access,
 * that the app's region matches the configuration as far as it can be observed, and which of the
 * uids, guids and member ids about to be created already exist there ("already present" is then
 * predicted before loading). Messages are not checked: the chat interface cannot look them up by
 * muid in bulk.
 */
import { type ChatBudget, createChatBudget } from '../load/chat-budget.ts'
import { redactUrl } from '../logger.ts'
import type { LegacyEntity } from '../model/index.ts'
import type { QuotaLedger } from '../state/quota-ledger.ts'
import { createManagementClient, createPlatformClient, type PlatformClient } from '../target/client.ts'
import { PlatformError } from '../target/errors.ts'
import { memberKey } from '../target/schemas.ts'
import { pagedList } from './paged-list.ts'
import type { ReportConfig } from './report-context.ts'
import type { TargetCheck } from './schema.ts'

const SAMPLES = 10

/** The region a default platform host names (`<app>.api-<region>.cometchat.io`), if it does. */
export function regionOfBaseUrl(baseUrl: string): string | undefined {
  try {
    return /\.api-([a-z]+)\./.exec(new URL(baseUrl).hostname)?.[1]
  } catch {
    return undefined
  }
}

function describe(err: unknown): string {
  if (err instanceof PlatformError) {
    return `${err.code}${err.status ? ` (HTTP ${err.status})` : ''}: ${err.message.replace(/^.*?: [A-Z_]+: /, '')}`
  }
  return err instanceof Error ? err.message : String(err)
}

export interface TargetCheckOptions {
  readonly config: Pick<ReportConfig, 'target' | 'management'>
  /** Keys about to be created, per entity (messages are ignored). */
  readonly toSend: Record<LegacyEntity, Set<string>>
  readonly requestsPerMinute?: number
  /** The window the chat quota is cut over and the slots' guard (`load.quotaWindowMs`, `load.quotaGuardMs`). @default a minute, the budget's guard */
  readonly timing?: { readonly windowMs: number; readonly guardMs?: number }
  /** The ledger's budget rows: the chat reads draw from the app's shared chat budget (`<appId>#chat`). */
  readonly quota: QuotaLedger
  readonly client?: PlatformClient
  readonly signal?: AbortSignal
}

export async function checkTarget(options: TargetCheckOptions): Promise<TargetCheck> {
  const { config, toSend, signal } = options
  const t = config.target
  const client = options.client ?? createPlatformClient({ baseUrl: t.baseUrl, apiKey: t.apiKey, timeoutMs: t.timeoutMs })
  const pacer: ChatBudget = await createChatBudget(options.quota, {
    appId: t.appId,
    requestsPerMinute: options.requestsPerMinute ?? t.chatQuota.requestsPerMinute,
    ...options.timing,
  })
  const problems: string[] = []
  const empty = () => ({ count: 0, checked: false, samples: [] as string[] })
  const existing: Existing = { users: empty(), groups: empty(), members: empty(), messages: empty() }
  const apiKey = await checkApiKey(client, pacer, t.baseUrl, problems, signal)
  const region = await observeRegion(config, apiKey, problems, signal)
  if (apiKey.fullAccess === false && !problems.some((p) => p.includes('full access'))) {
    problems.push('the apiKey is not a fullAccess key')
  }
  if (apiKey.works && apiKey.fullAccess !== false) {
    try {
      await findExisting(client, pacer, toSend, existing, signal)
    } catch (err) {
      problems.push(`listing what already exists failed: ${describe(err)}`)
    }
  }
  return {
    checkedAt: new Date().toISOString(),
    ok: problems.length === 0,
    baseUrl: redactUrl(t.baseUrl),
    apiKey,
    region,
    existing,
    chatRequests: pacer.counters.requests,
    problems,
  }
}

interface ApiKeyState {
  works: boolean
  fullAccess: boolean | null
  error: string | null
}

type Existing = Record<LegacyEntity, { count: number; checked: boolean; samples: string[] }>

/** One paced read: does the apiKey work, and with full access (a 403 says it works without)? */
async function checkApiKey(
  client: PlatformClient,
  pacer: ChatBudget,
  baseUrl: string,
  problems: string[],
  signal?: AbortSignal,
): Promise<ApiKeyState> {
  const apiKey: ApiKeyState = { works: false, fullAccess: null, error: null }
  try {
    await pacer.run(() => client.listUsers({ perPage: 1 }, signal), signal)
    apiKey.works = true
    apiKey.fullAccess = true
  } catch (err) {
    apiKey.error = describe(err)
    if (err instanceof PlatformError && err.status === 403) {
      apiKey.works = true
      apiKey.fullAccess = false
      problems.push(`the apiKey has no full access (${apiKey.error}): data import needs a REST API key with fullAccess scope`)
    } else if (err instanceof PlatformError && err.status === undefined) {
      // No answer at all (DNS, connection, timeout): nothing is known about the key.
      problems.push(
        `the platform at ${redactUrl(baseUrl)} could not be reached, so the apiKey was not checked: ${apiKey.error}; check target.baseUrl and this machine's network and DNS`,
      )
    } else {
      problems.push(`the apiKey does not work against ${redactUrl(baseUrl)}: ${apiKey.error}`)
    }
  }
  return apiKey
}

/**
 * Region: the default host names it; the management interface (when configured) knows it, and
 * the apiKey's scope too (which then overrides `apiKey.fullAccess`).
 */
async function observeRegion(
  config: TargetCheckOptions['config'],
  apiKey: ApiKeyState,
  problems: string[],
  signal?: AbortSignal,
): Promise<TargetCheck['region']> {
  const t = config.target
  let observed: string | null = regionOfBaseUrl(t.baseUrl) ?? null
  let note = observed ? 'from the base URL host' : 'not observable from the base URL'
  if (config.management) {
    try {
      const mgmt = createManagementClient({ url: config.management.url, key: config.management.key, secret: config.management.secret })
      const apps = await mgmt.listApps({ searchKey: t.appId }, signal)
      const app = apps.find((a) => a.id === t.appId)
      if (app) {
        observed = app.region
        note = 'from the management interface'
        const scope = app.apiKeys?.[t.apiKey]?.scope
        if (scope !== undefined) {
          apiKey.fullAccess = scope === 'fullAccess'
        }
      } else {
        problems.push(`the management interface does not list app ${t.appId}`)
      }
    } catch (err) {
      note = `management interface unavailable: ${describe(err)}`
    }
  }
  const matches = observed === null ? null : observed === t.region
  if (matches === false) {
    problems.push(`the app's region is ${observed}, the configuration says ${t.region}`)
  }
  return { configured: t.region, observed, matches, note }
}

/** Lists users, groups and the members of the groups about to get members; notes the keys about to be created that exist. */
async function findExisting(
  client: PlatformClient,
  pacer: ChatBudget,
  toSend: Record<LegacyEntity, Set<string>>,
  existing: Existing,
  signal?: AbortSignal,
): Promise<void> {
  const note = (entity: 'users' | 'groups' | 'members', key: string) => {
    const e = existing[entity]
    e.count++
    if (e.samples.length < SAMPLES) {
      e.samples.push(key)
    }
  }
  for await (const u of pagedList(pacer, (page, perPage) => client.listUsers({ page, perPage, withDeactivated: true }, signal), 1000, signal)) {
    if (toSend.users.has(u.uid)) {
      note('users', u.uid)
    }
  }
  existing.users.checked = true
  const groupsThere: string[] = []
  for await (const g of pagedList(pacer, (page, perPage) => client.listGroups({ page, perPage }, signal), 1000, signal)) {
    if (toSend.groups.has(g.guid)) {
      note('groups', g.guid)
    }
    groupsThere.push(g.guid)
  }
  existing.groups.checked = true
  // Members can only exist in groups that exist: list those whose members we are about to add.
  const wanted = new Set([...toSend.members].map((k) => k.slice(0, k.indexOf('_member_'))))
  for (const guid of groupsThere) {
    if (!wanted.has(guid)) {
      continue
    }
    for (const list of ['members', 'banned'] as const) {
      const fetch = (page: number, perPage: number) =>
        list === 'members' ? client.listGroupMembers(guid, { page, perPage }, signal) : client.listBannedUsers(guid, { page, perPage }, signal)
      for await (const m of pagedList(pacer, fetch, 1000, signal)) {
        const key = memberKey(guid, m.uid)
        if (toSend.members.has(key)) {
          note('members', key)
        }
      }
    }
  }
  existing.members.checked = true
}
