/**
 * End-to-end helpers for `chatferry run`: a config file for a source + sandbox app, the sandbox's
 * actual contents read with SQL, and an item-by-item comparison with the expected contents — the
 * oracle of expected-items.ts, which derives them from the fixture's canonical records with the
 * documented rules, independently of the connector, mappings, ledger and loader — naming every
 * difference.
 */
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { isDeepStrictEqual } from 'node:util'

import { sql } from 'kysely'
import { stringify } from 'yaml'

import type { PoliciesInput } from '../../mappings/index.ts'
import { LEGACY_ENTITIES } from '../../src/model/index.ts'
import type { Sandbox } from '../../src/sandbox/index.ts'
import type { Entity } from '../../src/target/schemas.ts'
import { type ExpectedItems, violation } from './expected-facts.ts'

export { type ExpectedItems, statedValue } from './expected-facts.ts'
export { type ExpectedMigration, expectMigration } from './expected-items.ts'

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

const TIMES = ['created_at', 'last_active_at', 'deactivated_at', 'joined_at', 'sent_at']

/** A stored row with its times as numbers (Postgres returns bigints as strings). */
function storedRow(row: Record<string, unknown>): Record<string, unknown> {
  const out = { ...row }
  for (const k of TIMES) {
    if (k in out) {
      out[k] = num(out[k])
    }
  }
  return out
}

/** `<muid>-p<n>` of a split message: its muid and part number. */
function partOf(key: string, splits: ExpectedItems['splits']): { muid: string; n: number } | undefined {
  const m = /^(.+)-p(\d+)$/.exec(key)
  return m?.[1] !== undefined && splits.has(m[1]) ? { muid: m[1], n: Number(m[2]) } : undefined
}

/**
 * Every expected item present exactly once with the facts the oracle states of it, and nothing
 * else; a split message as parts 1…N, each with the message's facts, its part number, within the
 * 10 KB of `data`, their texts together the message's (whitespace at the cuts aside).
 * Returns the differences, one line each (empty when the platform holds what was expected).
 */
export function compareWithExpected(expected: ExpectedItems, actual: SandboxContents, limit = 40): string[] {
  const problems: string[] = []
  for (const entity of LEGACY_ENTITIES) {
    const want = expected[entity]
    const seen = new Map<string, number>()
    for (const { key, row } of actual[entity]) {
      seen.set(key, (seen.get(key) ?? 0) + 1)
      const part = entity === 'messages' ? partOf(key, expected.splits) : undefined
      const facts = want.get(part?.muid ?? key)
      if (facts === undefined) {
        problems.push(`${entity} ${key}: on the platform but not expected`)
      } else if (seen.get(key) === 1) {
        const stored = storedRow(row)
        problems.push(...[...facts.values()].flatMap((f) => violation(stored, f) ?? []).map((v) => `${entity} ${key}: ${v}`))
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
  for (const [muid, split] of expected.splits) {
    problems.push(...splitProblems(muid, split.text, actual.messages))
  }
  return problems.slice(0, limit)
}

const DATA_MAX = 10 * 1024
const MAX_PARTS = 20

function splitProblems(muid: string, text: string | undefined, messages: readonly SandboxRow[]): string[] {
  const parts = messages
    .map(({ key, row }) => ({ n: key === muid ? 1 : key.startsWith(`${muid}-p`) ? Number(key.slice(muid.length + 2)) : NaN, row }))
    .filter((p) => Number.isInteger(p.n))
    .sort((a, b) => a.n - b.n)
  const of = parts.length
  const problems: string[] = []
  if (of < 2 || of > MAX_PARTS || parts.some((p, i) => p.n !== i + 1)) {
    problems.push(`messages ${muid}: split into parts ${JSON.stringify(parts.map((p) => p.n))}, expected 1…N with 2 ≤ N ≤ ${MAX_PARTS}`)
  }
  for (const { n, row } of parts) {
    const data = row.data as { text?: string; metadata?: { legacy?: { part?: unknown } } }
    if (!isDeepStrictEqual(data.metadata?.legacy?.part, { n, of, first: muid })) {
      problems.push(
        `messages ${muid} part ${n}: metadata.legacy.part is ${JSON.stringify(data.metadata?.legacy?.part)}, expected ${JSON.stringify({ n, of, first: muid })}`,
      )
    }
    if (Buffer.byteLength(JSON.stringify(data), 'utf8') > DATA_MAX) {
      problems.push(`messages ${muid} part ${n}: data is over ${DATA_MAX} bytes`)
    }
  }
  const squeeze = (s: string) => s.replace(/\s+/g, '')
  const joined = parts.map((p) => (p.row.data as { text?: string }).text ?? '').join('')
  if (text !== undefined && squeeze(joined) !== squeeze(text)) {
    problems.push(`messages ${muid}: the parts' texts together are not the message's (${joined.length} characters, expected ${text.length})`)
  }
  return problems
}

/** Counts of what the platform holds per entity. */
export function countsOf(c: SandboxContents): Record<Entity, number> {
  return { users: c.users.length, groups: c.groups.length, members: c.members.length, messages: c.messages.length }
}
