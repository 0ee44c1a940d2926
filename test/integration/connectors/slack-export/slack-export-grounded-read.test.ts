/**
 * The Slack export connector on an export shaped like genuine ones (test/fixtures/slack-export/
 * grounded.ts), read directly: `created` written as a string is a creation time; an entry whose
 * `created` is not a time is one problem naming that cause, and its members and messages are
 * problems naming the same cause (never "unknown group" further down).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { createConnector, SourceConfigSchema } from '../../../../connectors/index.ts'
import type { Cursor, SourceSession } from '../../../../src/model/connector.ts'
import type { LegacyEntity } from '../../../../src/model/records.ts'
import { GR, type GroundedFixture, groundedMessageId, writeGroundedSlack } from '../../../fixtures/slack-export/grounded.ts'

type AnyRow = { ok: true; record: Record<string, unknown> } | { ok: false; legacyId: string; field: string; reason: string }

async function readAll(s: SourceSession, entity: LegacyEntity): Promise<AnyRow[]> {
  const rows: AnyRow[] = []
  for await (const page of s.read(entity, { pageSize: 2 })) {
    rows.push(...(page.rows as AnyRow[]))
  }
  return rows
}

describe.each(['zip', 'folder'] as const)('slack-export on the grounded export as a %s', (layout) => {
  let fx: GroundedFixture
  let session: SourceSession
  beforeAll(async () => {
    fx = await writeGroundedSlack(layout)
    session = await createConnector(SourceConfigSchema.parse({ connector: 'slack-export', path: fx.path })).open()
  })
  afterAll(async () => {
    await session?.close()
    await fx?.drop()
  })

  it('reads `created` written as a string of digits as the creation time', async () => {
    const groups = await readAll(session, 'groups')
    const created = Object.fromEntries(groups.flatMap((r) => (r.ok ? [[r.record.id, r.record.createdAt]] : [])))
    // channels.json: "created": "1708646400" (random), "1708746400" (general) → epoch ms.
    expect(created).toEqual({ [GR.random]: (1_709_546_400 - 900_000) * 1000, [GR.general]: (1_709_546_400 - 800_000) * 1000 })
  })

  it('an entry whose created is not a time is one problem naming the field and the value', async () => {
    const bad = (await readAll(session, 'groups')).filter((r) => !r.ok)
    expect(bad).toEqual([expect.objectContaining({ legacyId: GR.broken, field: 'created' })])
    expect((bad[0] as { reason: string }).reason).toContain('"yesterday"')
  })

  it("its members and messages are problems naming the conversation's own cause, not an unknown group", async () => {
    const members = (await readAll(session, 'members')).filter((r) => !r.ok)
    expect(members).toEqual([expect.objectContaining({ legacyId: `${GR.broken}/${GR.alice}`, field: 'groupId' })])
    const messages = (await readAll(session, 'messages')).filter((r) => !r.ok)
    expect(messages).toEqual([expect.objectContaining({ legacyId: groundedMessageId(7), field: 'channel' })])
    for (const r of [...members, ...messages] as { reason: string }[]) {
      expect(r.reason).toContain('channels.json#2: created: created is not a time in epoch seconds')
      expect(r.reason).not.toContain('unknown')
    }
    // The other channels' members all read.
    expect((await readAll(session, 'members')).filter((r) => r.ok)).toHaveLength(5)
  })

  it('users: the users file, then each integration bot the export names; resumable from any cursor, bots included', async () => {
    const all = await readAll(session, 'users')
    expect(all.map((r) => (r.ok ? r.record.id : '!'))).toEqual([GR.alice, GR.bob, GR.carol, GR.jenkins, GR.github, GR.circle, GR.deploy])
    expect(await session.count('users')).toBe(7)
    // Resume after every page (page size 2): the cursor of a page among the bots is `{b}`.
    const resumed: unknown[] = []
    let after: Cursor | undefined
    for (;;) {
      const it = session.read('users', { pageSize: 2, ...(after !== undefined ? { after } : {}) })[Symbol.asyncIterator]()
      const next = await it.next()
      await it.return?.()
      if (next.done === true) {
        break
      }
      resumed.push(...next.value.rows)
      after = next.value.cursor
    }
    expect(resumed).toEqual(all)
    const keys: string[] = []
    const pages = session.readKeys?.('users')
    expect(pages).toBeDefined()
    for await (const page of pages ?? []) {
      keys.push(...page)
    }
    expect(keys).toEqual(all.map((r) => (r.ok ? r.record.id : '')))
  })
})
