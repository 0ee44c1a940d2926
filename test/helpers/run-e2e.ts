/**
 * End-to-end helpers for `chatferry run`: a config file for a source + sandbox app, the expected
 * contents of the platform computed independently of the connector, ledger and loader (expected
 * canonical records → `mapRecord` with an in-memory context), the sandbox's actual contents read
 * with SQL, and an item-by-item comparison that names every difference.
 */
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { isDeepStrictEqual } from 'node:util'

import { sql } from 'kysely'
import { stringify } from 'yaml'

import {
  createMappingContext,
  mapRecord,
  type MapResult,
  MemoryIdRegistry,
  type PlannedGroup,
  type PlannedMessage,
  type PlannedUser,
  type PoliciesInput,
  PoliciesSchema,
  type SkippedRef,
} from '../../mappings/index.ts'
import { LEGACY_ENTITIES, type LegacyEntity, legacyIdOf, type LegacyRecordOf } from '../../src/model/index.ts'
import type { Sandbox } from '../../src/sandbox/index.ts'
import type { Entity, GroupImport, MemberImport, MessageImport, UserImport } from '../../src/target/schemas.ts'
import type { ExpectedRows } from '../fixtures/expected-row.ts'

// ─── config ──────────────────────────────────────────────────────────────────────────────────────

export interface RunConfigOptions {
  readonly appId: string
  readonly apiKey: string
  readonly baseUrl: string
  /** Ledger on this Postgres database; else an embedded store in the config's directory. */
  readonly stateUrl?: string
  readonly source: Record<string, unknown>
  readonly policies?: PoliciesInput
  /** The `changes:` section (update policies of delta runs). */
  readonly changes?: Record<string, unknown>
  /** The `delta:` section (lookback, key reconciliation). */
  readonly delta?: Record<string, unknown>
  readonly load?: Record<string, unknown>
  readonly requestsPerMinute?: number
  readonly itemsPerRequest?: number
  /** Directory for the file (a fresh temporary one by default). */
  readonly dir?: string
}

/** Writes `chatferry.yaml` for a `run`; returns its path. */
export function writeRunConfig(o: RunConfigOptions): string {
  const dir = o.dir ?? mkdtempSync(join(tmpdir(), 'chatferry-run-'))
  const file = join(dir, 'chatferry.yaml')
  writeFileSync(
    file,
    stringify({
      target: {
        appId: o.appId,
        region: 'us',
        apiKey: o.apiKey,
        baseUrl: o.baseUrl,
        timeoutMs: 10_000,
        quota: { requestsPerMinute: o.requestsPerMinute ?? 6000, itemsPerRequest: o.itemsPerRequest ?? 50 },
      },
      state: o.stateUrl !== undefined ? { url: o.stateUrl } : { dir: join(dir, '.chatferry') },
      source: o.source,
      ...(o.policies !== undefined ? { policies: o.policies } : {}),
      ...(o.changes !== undefined ? { changes: o.changes } : {}),
      ...(o.delta !== undefined ? { delta: o.delta } : {}),
      ...(o.load !== undefined ? { load: o.load } : {}),
    }),
  )
  return file
}

// ─── expectation ────────────────────────────────────────────────────────────────────────────────

export interface ExpectedItems {
  users: Map<string, UserImport>
  groups: Map<string, GroupImport>
  members: Map<string, MemberImport>
  messages: Map<string, MessageImport>
}

export interface ExpectedMigration {
  /** Every item the platform should hold, by key (uid, guid, `<guid>_member_<uid>`, muid). */
  readonly items: ExpectedItems
  /** The legacy id each key comes from (`~placeholder:<uid>` style for extra items). */
  readonly legacyOfKey: Map<string, string>
  /** Rows that must be rejected: `entity legacyId` → the field at fault. */
  readonly rejects: Map<string, { entity: LegacyEntity; legacyId: string; field: string }>
  /** Records a policy skipped: `entity legacyId` → policy. */
  readonly skipped: Map<string, string>
}

/**
 * What the platform should hold after a complete run, derived from expected canonical records
 * (e.g. `expectedMattermost(seed)`) with the documented mapping and policies: users → groups →
 * members → messages, messages oldest first (the sources' key order), every record mapped once.
 */
export function expectMigration(rows: ExpectedRows, policies: PoliciesInput, now: number): ExpectedMigration {
  const parsed = PoliciesSchema.parse(policies)
  const users = new Map<string, PlannedUser | SkippedRef>()
  const groups = new Map<string, PlannedGroup | SkippedRef>()
  const messages = new Map<string, PlannedMessage | SkippedRef>()
  const names = new Map<string, string>()
  const ctx = createMappingContext({ now, policies: parsed, ids: new MemoryIdRegistry(), users, groups, messages })
  const items: ExpectedItems = { users: new Map(), groups: new Map(), members: new Map(), messages: new Map() }
  const legacyOfKey = new Map<string, string>()
  const rejects: ExpectedMigration['rejects'] = new Map()
  const skipped = new Map<string, string>()

  for (const entity of LEGACY_ENTITIES) {
    const list = [...rows[entity]]
    if (entity === 'messages') {
      list.sort((a, b) => {
        if (!a.ok || !b.ok) {
          return 0
        }
        const x = a.record as LegacyRecordOf['messages']
        const y = b.record as LegacyRecordOf['messages']
        return x.sentAt - y.sentAt || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0)
      })
    }
    for (const row of list) {
      if (!row.ok) {
        rejects.set(`${entity} ${row.legacyId}`, { entity, legacyId: row.legacyId, field: row.field })
        continue
      }
      const record = row.record as LegacyRecordOf[LegacyEntity]
      const legacyId = legacyIdOf(entity, record)
      const result = mapRecord(entity, record as never, ctx) as MapResult
      if (result.kind === 'rejected') {
        rejects.set(`${entity} ${legacyId}`, { entity, legacyId, field: result.field })
        remember(entity, record, undefined, { skipped: true, policy: result.policy ?? 'dependencies' })
        continue
      }
      if (result.kind === 'skipped') {
        skipped.set(`${entity} ${legacyId}`, result.policy)
        remember(entity, record, undefined, { skipped: true, policy: result.policy })
        continue
      }
      for (const item of result.items) {
        ;(items[entity] as Map<string, unknown>).set(item.targetKey, item.payload)
        legacyOfKey.set(`${entity} ${item.targetKey}`, legacyId)
      }
      for (const extra of result.extraItems) {
        if (items.users.has(extra.targetKey)) {
          continue
        }
        items.users.set(extra.targetKey, extra.payload)
        legacyOfKey.set(`users ${extra.targetKey}`, `~${extra.reason ?? 'extra'}:${extra.targetKey}`)
        names.set(extra.payload.uid, extra.payload.name)
      }
      remember(entity, record, result.items[0]?.payload, undefined)
    }
  }
  return { items, legacyOfKey, rejects, skipped }

  function remember(entity: LegacyEntity, record: LegacyRecordOf[LegacyEntity], payload: unknown, skip: SkippedRef | undefined): void {
    if (entity === 'users') {
      const r = record as LegacyRecordOf['users']
      if (skip) {
        return void users.set(r.id, skip)
      }
      const u = payload as UserImport
      users.set(r.id, { uid: u.uid, name: u.name, ...(u.avatar ? { avatar: u.avatar } : {}), ...(r.username ? { username: r.username } : {}) })
      names.set(u.uid, u.name)
    } else if (entity === 'groups') {
      const r = record as LegacyRecordOf['groups']
      if (skip) {
        return void groups.set(r.id, skip)
      }
      const g = payload as GroupImport
      groups.set(r.id, {
        guid: g.guid,
        name: g.name,
        type: g.type,
        ...(g.createdAt !== undefined ? { createdAt: g.createdAt } : {}),
        ...(g.owner ? { owner: g.owner } : {}),
      })
    } else if (entity === 'messages') {
      const r = record as LegacyRecordOf['messages']
      if (skip) {
        return void messages.set(r.id, skip)
      }
      const m = payload as MessageImport
      const senderName = names.get(m.sender)
      messages.set(r.id, { muid: m.muid, ...(m.data?.text !== undefined ? { text: m.data.text } : {}), ...(senderName ? { senderName } : {}) })
    }
  }
}

// ─── the sandbox's contents ─────────────────────────────────────────────────────────────────────

export interface SandboxRow {
  readonly key: string
  readonly row: Record<string, unknown>
}

export type SandboxContents = Record<Entity, SandboxRow[]>

const num = (v: unknown) => (v === null || v === undefined ? null : Number(v))

/** Everything an app holds, one row per stored record (duplicates stay visible), keyed like items. */
export async function sandboxContents(sb: Sandbox, appId: string): Promise<SandboxContents> {
  const db = sb.store
  const users = await sql<Record<string, unknown>>`select * from sandbox.users where app_id = ${appId} order by seq`.execute(db)
  const groups = await sql<Record<string, unknown>>`select * from sandbox.groups where app_id = ${appId} order by seq`.execute(db)
  const members = await sql<Record<string, unknown>>`select * from sandbox.members where app_id = ${appId} order by seq`.execute(db)
  const messages = await sql<Record<string, unknown>>`select * from sandbox.messages where app_id = ${appId} order by id`.execute(db)
  return {
    users: users.rows.map((r) => ({ key: String(r.uid), row: r })),
    groups: groups.rows.map((r) => ({ key: String(r.guid), row: r })),
    members: members.rows.map((r) => ({ key: `${String(r.guid)}_member_${String(r.uid)}`, row: r })),
    messages: messages.rows.map((r) => ({ key: String(r.muid), row: r })),
  }
}

/** The fields of a stored row that a given import item determines, as the sandbox stores them. */
function storedView(
  entity: Entity,
  item: Record<string, unknown>,
  row: Record<string, unknown>,
): { expected: Record<string, unknown>; actual: Record<string, unknown> } {
  const pick = (o: Record<string, unknown>, keys: string[]) => Object.fromEntries(keys.map((k) => [k, o[k]]))
  switch (entity) {
    case 'users': {
      const u = item as UserImport
      const expected: Record<string, unknown> = {
        name: u.name,
        avatar: u.avatar ?? null,
        link: u.link ?? null,
        role: u.role ?? 'default',
        metadata: u.metadata ?? null,
        tags: u.tags ?? [],
        last_active_at: u.lastActiveAt ?? null,
        deactivated_at: u.deactivatedAt ?? null,
      }
      if (u.createdAt !== undefined) {
        expected.created_at = u.createdAt
      }
      const actual = pick(row, Object.keys(expected))
      for (const k of ['created_at', 'last_active_at', 'deactivated_at']) {
        if (k in actual) {
          actual[k] = num(actual[k])
        }
      }
      return { expected, actual }
    }
    case 'groups': {
      const g = item as GroupImport
      const expected: Record<string, unknown> = {
        name: g.name,
        type: g.type,
        icon: g.icon ?? null,
        password: g.password ?? null,
        owner: g.owner ?? null,
        metadata: g.metadata ?? null,
        tags: g.tags ?? [],
      }
      if (g.createdAt !== undefined) {
        expected.created_at = g.createdAt
      }
      const actual = pick(row, Object.keys(expected))
      if ('created_at' in actual) {
        actual.created_at = num(actual.created_at)
      }
      return { expected, actual }
    }
    case 'members': {
      const m = item as MemberImport
      const expected: Record<string, unknown> = { guid: m.guid, uid: m.uid, scope: m.scope ?? 'participant', is_banned: m.isBanned ?? false }
      if (m.joinedAt !== undefined) {
        expected.joined_at = m.joinedAt
      }
      const actual = pick(row, Object.keys(expected))
      if ('joined_at' in actual) {
        actual.joined_at = num(actual.joined_at)
      }
      return { expected, actual }
    }
    case 'messages': {
      const m = item as MessageImport
      const expected: Record<string, unknown> = {
        sender: m.sender,
        receiver_type: m.receiverType,
        receiver: m.receiver,
        category: m.category ?? 'message',
        type: m.type ?? 'text',
        sent_at: m.sentAt,
        data: m.data ?? {},
        tags: m.tags ?? null,
      }
      const actual = pick(row, Object.keys(expected))
      actual.sent_at = num(actual.sent_at)
      return { expected, actual }
    }
  }
}

/**
 * Every expected item present exactly once with the fields it determines, and nothing else.
 * Returns the differences, one line each (empty when the platform holds exactly what was expected).
 */
export function compareWithExpected(expected: ExpectedItems, actual: SandboxContents, limit = 40): string[] {
  const problems: string[] = []
  for (const entity of LEGACY_ENTITIES) {
    const want = expected[entity] as Map<string, Record<string, unknown>>
    const seen = new Map<string, number>()
    for (const { key, row } of actual[entity]) {
      seen.set(key, (seen.get(key) ?? 0) + 1)
      const item = want.get(key)
      if (item === undefined) {
        problems.push(`${entity} ${key}: on the platform but not expected`)
        continue
      }
      if (seen.get(key) !== 1) {
        continue
      }
      const view = storedView(entity, item, row)
      for (const field of Object.keys(view.expected)) {
        if (!isDeepStrictEqual(normalise(view.actual[field]), normalise(view.expected[field]))) {
          problems.push(`${entity} ${key}: ${field} is ${JSON.stringify(view.actual[field])}, expected ${JSON.stringify(view.expected[field])}`)
        }
      }
    }
    for (const [key, n] of seen) {
      if (n > 1) {
        problems.push(`${entity} ${key}: on the platform ${n} times`)
      }
    }
    for (const key of want.keys()) {
      if (!seen.has(key)) {
        problems.push(`${entity} ${key}: expected but missing on the platform`)
      }
    }
  }
  return problems.slice(0, limit)
}

/** JSON round trip: jsonb drops nothing but may reorder keys; undefined-valued keys disappear. */
function normalise(v: unknown): unknown {
  return v === undefined ? undefined : JSON.parse(JSON.stringify(v))
}

/** Counts of what the platform holds per entity. */
export function countsOf(c: SandboxContents): Record<Entity, number> {
  return { users: c.users.length, groups: c.groups.length, members: c.members.length, messages: c.messages.length }
}
