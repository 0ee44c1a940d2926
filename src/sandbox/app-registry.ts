/**
 * The sandbox's apps and their API keys: kept in the store, cached in memory (the sandbox is the
 * only writer of its store), so authenticating a request costs no query.
 */
import { randomBytes } from 'node:crypto'

import { isPlatformId } from '../target/schemas.ts'
import { applySettingsPatch, AppSettings, type AppSettingsPatch, DEFAULT_APP_SETTINGS } from './app-settings.ts'
import type { SandboxDb } from './sandbox-store.ts'

/** Documented regions. */
export const REGIONS = ['us', 'eu', 'in'] as const
export type Region = (typeof REGIONS)[number]

/** Documented API key scopes: a "Rest API Key" (fullAccess) and an "Auth Key" (authOnly). */
export const KEY_SCOPES = ['fullAccess', 'authOnly'] as const
export type KeyScope = (typeof KEY_SCOPES)[number]

/** Documented trial length is not given; the sandbox says 30 days (assumed). */
const TRIAL_DAYS = 30
/**
 * Documented (management error codes, `ERR_APP_ARCHIVED`): "The app has been archived and will be
 * permanently deleted after 30 days."
 */
export const ARCHIVE_DAYS = 30
const REGION_NAMES: Record<Region, string> = { us: 'United States', eu: 'Europe', in: 'India' }

/** An active app as the sandbox keeps it in memory. */
export interface AppInfo {
  readonly id: string
  readonly name: string
  readonly region: Region
  readonly plan: string
  readonly state: string
  readonly createdAt: number
  settings: AppSettings
}

/** One API key of an app. */
export interface ApiKeyInfo {
  readonly apiKey: string
  readonly appId: string
  readonly name: string
  readonly scope: KeyScope
  readonly createdBy: string
  readonly createdAt: number
}

/** What {@link AppRegistry.create} takes; every field has a default. */
export interface CreateAppInput {
  /** Lowercase alpha-dash, at most 100 characters. @default a random 16-character hex id */
  readonly id?: string
  /** @default the id */
  readonly name?: string
  /** @default 'us' */
  readonly region?: Region
  /** The fullAccess "Rest API Key". @default 40 random hex characters */
  readonly apiKey?: string
  /** The authOnly "Auth Key". @default 40 random hex characters */
  readonly authKey?: string
  /** Settings of this app on top of the sandbox defaults. */
  readonly settings?: AppSettingsPatch
}

/** The apps and keys of the sandbox, read from memory, written through to the store. */
export interface AppRegistry {
  /** Reads every app and key from the store into memory. */
  load(): Promise<void>
  /** An active app, or undefined (unknown or deleted). */
  get(appId: string): AppInfo | undefined
  key(apiKey: string): ApiKeyInfo | undefined
  keysOf(appId: string): ApiKeyInfo[]
  /** Active apps, oldest first. */
  list(): AppInfo[]
  /**
   * Creates an app. With an explicit `id` that already exists, the app is kept and the given keys
   * are added to it, so pre-creating the same app on a persistent store is idempotent.
   */
  create(input: CreateAppInput): Promise<AppInfo>
  /**
   * Archives an app (it stops answering, with `ERR_APP_ARCHIVED`); returns the UNIX second of its
   * scheduled removal. Archived apps whose time has come are removed from the store first.
   */
  delete(appId: string): Promise<number>
  /** When an archived app will be removed (UNIX seconds), or undefined: not archived, or its time has come (it is gone). */
  archivedUntil(appId: string): number | undefined
  /** Removes from the store every archived app whose time has come, with all its data. */
  purgeExpired(): Promise<void>
  updateSettings(appId: string, patch: unknown): Promise<AppSettings>
  /** The documented app record of the management interface. */
  record(app: AppInfo): Record<string, unknown>
}

const API_KEY_PATTERN = /^[\x21-\x7e]{1,200}$/

/** The store's tables that hold an app's data (everything but `apps` itself). */
const APP_TABLES = [
  'app_collaborators',
  'app_extensions',
  'webhook_deliveries',
  'webhooks',
  'request_log',
  'messages',
  'members',
  'groups',
  'users',
  'api_keys',
] as const

function hex(bytes: number): string {
  return randomBytes(bytes).toString('hex')
}

/**
 * @param defaults the settings of apps created without their own.
 * @param archiveDays how long a deleted app stays archived before it is removed (fractions allowed, for tests).
 */
export function createAppRegistry(db: SandboxDb, defaults: AppSettings, archiveDays = ARCHIVE_DAYS): AppRegistry {
  const apps = new Map<string, AppInfo>()
  /** Archived apps: id → UNIX second of their removal. */
  const archived = new Map<string, number>()
  const keys = new Map<string, ApiKeyInfo>()
  const order: string[] = []

  function nowSeconds(): number {
    return Math.floor(Date.now() / 1000)
  }

  async function addKey(appId: string, apiKey: string, scope: KeyScope, createdAt: number): Promise<void> {
    const existing = keys.get(apiKey)
    if (existing !== undefined) {
      if (existing.appId !== appId) {
        throw new Error(`the API key given for app ${appId} already belongs to another app`)
      }
      return
    }
    if (!API_KEY_PATTERN.test(apiKey)) {
      throw new Error('an API key is 1–200 printable characters without spaces')
    }
    const info: ApiKeyInfo = {
      apiKey,
      appId,
      name: scope === 'fullAccess' ? 'Rest API Key' : 'Auth Key',
      scope,
      createdBy: 'app_system',
      createdAt,
    }
    await db
      .insertInto('api_keys')
      .values({ api_key: apiKey, app_id: appId, name: info.name, scope, created_by: info.createdBy, created_at: createdAt })
      .execute()
    keys.set(apiKey, info)
  }

  const registry: AppRegistry = {
    async load() {
      apps.clear()
      keys.clear()
      order.length = 0
      archived.clear()
      for (const r of await db.selectFrom('apps').select(['id', 'scheduled_to_delete_at']).where('state', '=', 'deleted').execute()) {
        archived.set(r.id, Number(r.scheduled_to_delete_at ?? 0))
      }
      await registry.purgeExpired()
      const rows = await db.selectFrom('apps').selectAll().where('state', '=', 'active').orderBy('seq').execute()
      for (const r of rows) {
        // Knobs added since the app was stored take their defaults (fault knobs too).
        const stored = r.settings as Partial<AppSettings>
        const parsed = AppSettings.safeParse({ ...DEFAULT_APP_SETTINGS, ...stored, faults: { ...DEFAULT_APP_SETTINGS.faults, ...stored.faults } })
        apps.set(r.id, {
          id: r.id,
          name: r.name,
          region: r.region as Region,
          plan: r.plan,
          state: r.state,
          createdAt: r.created_at,
          settings: parsed.success ? parsed.data : { ...defaults },
        })
        order.push(r.id)
      }
      const keyRows = await db.selectFrom('api_keys').selectAll().execute()
      for (const k of keyRows) {
        keys.set(k.api_key, {
          apiKey: k.api_key,
          appId: k.app_id,
          name: k.name,
          scope: k.scope as KeyScope,
          createdBy: k.created_by,
          createdAt: k.created_at,
        })
      }
    },
    get: (appId) => apps.get(appId),
    key: (apiKey) => {
      const k = keys.get(apiKey)
      return k !== undefined && apps.has(k.appId) ? k : undefined
    },
    keysOf: (appId) => [...keys.values()].filter((k) => k.appId === appId),
    list: () => order.map((id) => apps.get(id)).filter((a): a is AppInfo => a !== undefined),
    async create(input) {
      const createdAt = nowSeconds()
      const region = input.region ?? 'us'
      if (!(REGIONS as readonly string[]).includes(region)) {
        throw new Error(`region must be one of ${REGIONS.join(', ')}`)
      }
      if (input.id !== undefined && !isPlatformId(input.id)) {
        throw new Error(`an app id is lowercase alpha-dash (a-z, 0-9, -, _), 1–100 characters, got ${JSON.stringify(input.id)}`)
      }
      const existing = input.id === undefined ? undefined : apps.get(input.id)
      if (existing !== undefined) {
        if (input.apiKey !== undefined) {
          await addKey(existing.id, input.apiKey, 'fullAccess', createdAt)
        }
        if (input.authKey !== undefined) {
          await addKey(existing.id, input.authKey, 'authOnly', createdAt)
        }
        if (input.settings !== undefined) {
          await registry.updateSettings(existing.id, input.settings)
        }
        return existing
      }
      let id = input.id
      if (id === undefined) {
        do {
          id = hex(8)
        } while (apps.has(id))
      }
      const settings = input.settings === undefined ? { ...defaults } : applySettingsPatch(defaults, input.settings)
      await registry.purgeExpired()
      const taken = await db.selectFrom('apps').select('id').where('id', '=', id).executeTakeFirst()
      if (taken !== undefined) {
        throw new Error(`the app id ${id} belongs to a deleted app`)
      }
      await db
        .insertInto('apps')
        .values({
          id,
          name: input.name ?? id,
          region,
          plan: 'trial',
          state: 'active',
          settings: JSON.stringify(settings),
          created_at: createdAt,
          scheduled_to_delete_at: null,
        })
        .execute()
      const app: AppInfo = { id, name: input.name ?? id, region, plan: 'trial', state: 'active', createdAt, settings }
      apps.set(id, app)
      order.push(id)
      try {
        await addKey(id, input.apiKey ?? hex(20), 'fullAccess', createdAt)
        await addKey(id, input.authKey ?? hex(20), 'authOnly', createdAt)
      } catch (err) {
        apps.delete(id)
        order.splice(order.indexOf(id), 1)
        await db.deleteFrom('apps').where('id', '=', id).execute()
        throw err
      }
      return app
    },
    archivedUntil(appId) {
      const until = archived.get(appId)
      return until !== undefined && nowSeconds() < until ? until : undefined
    },
    async purgeExpired() {
      const now = nowSeconds()
      const gone = [...archived].filter(([, until]) => now >= until).map(([id]) => id)
      if (gone.length === 0) {
        return
      }
      await db.transaction().execute(async (tx) => {
        for (const table of APP_TABLES) {
          await tx.deleteFrom(table).where('app_id', 'in', gone).execute()
        }
        await tx.deleteFrom('apps').where('id', 'in', gone).execute()
      })
      for (const id of gone) {
        archived.delete(id)
        for (const [k, info] of keys) {
          if (info.appId === id) {
            keys.delete(k)
          }
        }
      }
    },
    async delete(appId) {
      await registry.purgeExpired()
      const scheduled = Math.ceil(nowSeconds() + archiveDays * 86_400)
      await db.updateTable('apps').set({ state: 'deleted', scheduled_to_delete_at: scheduled }).where('id', '=', appId).execute()
      archived.set(appId, scheduled)
      apps.delete(appId)
      const i = order.indexOf(appId)
      if (i >= 0) {
        order.splice(i, 1)
      }
      return scheduled
    },
    async updateSettings(appId, patch) {
      const app = apps.get(appId)
      if (app === undefined) {
        throw new Error(`no app ${appId}`)
      }
      const next = applySettingsPatch(app.settings, patch)
      await db
        .updateTable('apps')
        .set({ settings: JSON.stringify(next) })
        .where('id', '=', appId)
        .execute()
      app.settings = next
      return next
    },
    record(app) {
      const apiKeys: Record<string, unknown> = {}
      for (const k of registry.keysOf(app.id)) {
        apiKeys[k.apiKey] = { apiKey: k.apiKey, name: k.name, scope: k.scope, createdBy: k.createdBy, createdAt: k.createdAt }
      }
      return {
        id: app.id,
        name: app.name,
        region: app.region,
        plan: app.plan,
        trialEndsAt: app.createdAt + TRIAL_DAYS * 86_400,
        state: app.state,
        owner: 'sandbox',
        createdAt: app.createdAt,
        appOwner: { id: 'sandbox', name: 'Sandbox', email: 'owner@sandbox.example' },
        appRegion: { id: app.region, name: app.region, description: REGION_NAMES[app.region] },
        apiKeys,
      }
    },
  }
  return registry
}
