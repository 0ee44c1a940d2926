import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { afterAll, describe, expect, it } from 'vitest'

import {
  createMappingContext,
  defaultPolicies,
  loadUserModule,
  mappers,
  mapRecord,
  type MapResult,
  PoliciesSchema,
  POLICY_NAMES,
  tallyOutcomes,
} from '../../../mappings/index.ts'

describe('PoliciesSchema', () => {
  it('every key has a default: {} parses to the documented defaults', () => {
    expect(defaultPolicies()).toEqual({
      threads: { replies: 'flatten', quoteParent: false },
      edits: { editedAt: 'metadata' },
      deletes: { mode: 'skip', tombstoneText: 'This message was deleted.' },
      reactions: 'metadata',
      systemMessages: { mode: 'skip', systemUser: { uid: 'system', name: 'System' } },
      retention: { retentionDays: 183, oldMessages: 'skip' },
      emptyMessages: 'skip',
      longText: { mode: 'split', maxParts: 20, truncationMarker: ' […]' },
      brokenAttachments: 'drop',
      missingUsers: { mode: 'placeholder', name: 'Unknown user {id}', uidPrefix: 'placeholder-', tag: 'placeholder' },
      mentions: 'rewrite',
      joinedAt: 'clamp',
      scopes: { admin: 'admin', moderator: 'moderator', participant: 'participant', owner: 'admin' },
      bans: 'keep',
      groupTypes: { public: 'public', private: 'private', password: 'password', withoutPassword: 'private' },
      bots: { mode: 'keep', tag: 'bot' },
      deactivatedUsers: 'keep',
      archivedGroups: { mode: 'keep', tag: 'archived' },
      roles: { map: {}, unmapped: 'drop' },
      groupDescription: 'metadata',
      userEmails: 'metadata',
      fieldLimits: 'fix',
      text: { invalidCharacters: 'strip' },
      legacyMetadata: { key: 'legacy', ids: true },
    })
  })

  it('a partial nested object keeps the other defaults', () => {
    const p = PoliciesSchema.parse({ systemMessages: { mode: 'as-user' }, retention: { oldMessages: 'send' }, module: './adjust.ts' })
    expect(p.systemMessages).toEqual({ mode: 'as-user', systemUser: { uid: 'system', name: 'System' } })
    expect(p.retention).toEqual({ retentionDays: 183, oldMessages: 'send' })
    expect(p.module).toBe('./adjust.ts')
  })

  it.each([
    { name: 'unknown top-level key', input: { thread: {} }, path: '' },
    { name: 'unknown nested key', input: { deletes: { mode: 'skip', text: 'x' } }, path: 'deletes' },
    { name: 'unknown option', input: { deletes: { mode: 'hide' } }, path: 'deletes.mode' },
    { name: 'quoteParent 0 words', input: { threads: { quoteParent: 0 } }, path: 'threads.quoteParent' },
    { name: 'system uid not alpha-dash', input: { systemMessages: { systemUser: { uid: 'System User' } } }, path: 'systemMessages.systemUser.uid' },
    { name: 'retentionDays 0', input: { retention: { retentionDays: 0 } }, path: 'retention.retentionDays' },
    { name: 'maxParts 1', input: { longText: { maxParts: 1 } }, path: 'longText.maxParts' },
    { name: 'placeholder prefix uppercase', input: { missingUsers: { uidPrefix: 'Ghost-' } }, path: 'missingUsers.uidPrefix' },
    { name: 'scope not a platform scope', input: { scopes: { admin: 'owner' } }, path: 'scopes.admin' },
    { name: 'role map to an invalid id', input: { roles: { map: { a: 'Not Valid' } } }, path: 'roles.map.a' },
    { name: 'groupTypes to an unknown type', input: { groupTypes: { public: 'open' } }, path: 'groupTypes.public' },
  ])('refuses $name at its path', ({ input, path }) => {
    const r = PoliciesSchema.safeParse(input)
    expect(r.success).toBe(false)
    expect(r.error?.issues.map((i) => i.path.join('.'))).toContain(path)
  })

  it('POLICY_NAMES: every configurable policy plus the fixed rules', () => {
    expect([...POLICY_NAMES].sort()).toEqual(
      [
        'threads',
        'edits',
        'deletes',
        'reactions',
        'systemMessages',
        'retention',
        'emptyMessages',
        'longText',
        'brokenAttachments',
        'missingUsers',
        'mentions',
        'joinedAt',
        'scopes',
        'bans',
        'groupTypes',
        'bots',
        'deactivatedUsers',
        'archivedGroups',
        'roles',
        'groupDescription',
        'userEmails',
        'fieldLimits',
        'text',
        'ids',
        'names',
        'groupOwner',
        'dependencies',
        'userModule',
      ].sort(),
    )
  })
})

describe('tallyOutcomes', () => {
  const results: MapResult[] = [
    {
      kind: 'items',
      items: [],
      extraItems: [],
      outcomes: [
        { policy: 'threads', outcome: 'flattened' },
        { policy: 'threads', outcome: 'quoted' },
      ],
    },
    { kind: 'items', items: [], extraItems: [], outcomes: [{ policy: 'threads', outcome: 'flattened' }] },
    { kind: 'skipped', policy: 'deletes', reason: 'x', outcomes: [{ policy: 'deletes', outcome: 'skipped' }] },
    { kind: 'rejected', field: 'sentAt', reason: 'x' },
  ]
  it.each([
    { name: 'results', input: results, into: undefined, expected: { threads: { flattened: 2, quoted: 1 }, deletes: { skipped: 1 } } },
    { name: 'bare outcomes', input: [{ policy: 'joinedAt' as const, outcome: 'clamped' }], into: undefined, expected: { joinedAt: { clamped: 1 } } },
    {
      name: 'into an existing tally',
      input: [{ policy: 'joinedAt' as const, outcome: 'clamped' }],
      into: { joinedAt: { clamped: 4 } },
      expected: { joinedAt: { clamped: 5 } },
    },
  ])('$name', ({ input, into, expected }) => {
    expect(tallyOutcomes(input, into)).toEqual(expected)
  })
})

describe('mappers registry', () => {
  it('has one mapping per entity and mapRecord dispatches', () => {
    expect(Object.keys(mappers)).toEqual(['users', 'groups', 'members', 'messages'])
    const ctx = createMappingContext({ now: Date.UTC(2025, 0, 1) })
    expect(mapRecord('users', { id: 'a', name: 'A', isBot: false }, ctx)).toMatchObject({
      kind: 'items',
      items: [{ entity: 'users', targetKey: 'a' }],
    })
    expect(mapRecord('groups', { id: 'g', name: 'G', type: 'public' }, ctx)).toMatchObject({
      kind: 'items',
      items: [{ entity: 'groups', targetKey: 'g' }],
    })
  })

  it('mappings are deterministic: same record, same context state, same result', () => {
    const make = () => createMappingContext({ now: Date.UTC(2025, 0, 1), users: { u: { uid: 'u', name: 'U' } } })
    const rec = {
      id: 'M',
      senderId: 'x',
      receiverType: 'user' as const,
      receiverId: 'u',
      type: 'text' as const,
      text: 'hi',
      sentAt: Date.UTC(2024, 11, 31),
    }
    expect(mapRecord('messages', rec, make())).toEqual(mapRecord('messages', rec, make()))
  })
})

describe('loadUserModule', () => {
  const dir = mkdtempSync(join(tmpdir(), 'chatferry-module-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))
  const write = (name: string, text: string) => {
    writeFileSync(join(dir, name), text)
    return name
  }

  it.each([
    { name: 'named export adjust', file: 'named.mjs', text: 'export function adjust(e, item) { return { ...item, name: item.name + "!" } }' },
    {
      name: 'default export function',
      file: 'default-fn.mjs',
      text: 'export default function (e, item) { return { ...item, name: item.name + "!" } }',
    },
    {
      name: 'default export object with adjust',
      file: 'default-obj.mjs',
      text: 'export default { adjust: (e, item) => ({ ...item, name: item.name + "!" }) }',
    },
  ])('loads a module with a $name, relative to baseDir, and the mapping applies it', async ({ file, text }) => {
    const mod = await loadUserModule(write(file, text), dir)
    expect(mod.path).toBe(join(dir, file))
    const ctx = createMappingContext({ now: Date.UTC(2025, 0, 1), adjust: mod.adjust })
    expect(mapRecord('users', { id: 'a', name: 'Ann', isBot: false }, ctx)).toMatchObject({
      kind: 'items',
      items: [{ payload: { uid: 'a', name: 'Ann!' } }],
      outcomes: [{ policy: 'userModule', outcome: 'adjusted' }],
    })
  })

  it.each([
    { name: 'no adjust export', file: 'none.mjs', text: 'export const x = 1', error: /must export a function `adjust/ },
    { name: 'a missing file', file: 'missing.mjs', text: undefined, error: /cannot load/ },
    { name: 'a syntax error', file: 'broken.mjs', text: 'export function adjust( {', error: /cannot load/ },
  ])('refuses $name with a clear error', async ({ file, text, error }) => {
    if (text !== undefined) {
      write(file, text)
    }
    await expect(loadUserModule(file, dir)).rejects.toThrow(error)
  })
})
