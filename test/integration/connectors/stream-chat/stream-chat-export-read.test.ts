/**
 * The Stream Chat export as operators hand it over, beyond the contract suite's fixture: a v1
 * export of one channel (the document is the channel export object itself, as Stream writes it for
 * a single channel), a file that breaks off (every entity before the break is read, then one
 * problem on `file`, and a count agrees with the read), a file with no channel (SOURCE_INVALID
 * naming the file and how it was read, and why when it broke before one), `format` chosen by name
 * or forced, and reads before the users are read (the directory without users) giving the rows and
 * positions a read after them gives.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { afterAll, describe, expect, it } from 'vitest'

import { createConnector, SourceConfigSchema } from '../../../../connectors/index.ts'
import { ChatferryError } from '../../../../src/errors.ts'
import type { SourceRow } from '../../../../src/model/connector.ts'
import type { LegacyEntity } from '../../../../src/model/records.ts'
import { writeStreamFixture } from '../../../fixtures/stream-chat/generate.ts'

const dir = mkdtempSync(join(tmpdir(), 'cf-stream-read-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

async function readAll(config: Record<string, unknown>, entity: LegacyEntity) {
  const s = await createConnector(SourceConfigSchema.parse({ connector: 'stream-chat', ...config })).open()
  try {
    const rows: SourceRow<unknown>[] = []
    for await (const p of s.read(entity, { pageSize: 3 })) {
      rows.push(...p.rows)
    }
    return { rows, count: await s.count(entity) }
  } finally {
    await s.close()
  }
}
const label = (r: SourceRow<unknown>) => (r.ok ? (r.record as { id: string }).id : `${r.legacyId}:${r.field}`)

describe('stream-chat export files', () => {
  const fx = writeStreamFixture('json')
  afterAll(() => fx.drop())
  const exports = JSON.parse(readFileSync(fx.path, 'utf8')) as { channel: { cid: string }; messages: { id: string }[] }[]

  it('reads a single-channel v1 export (the object itself, not an array)', async () => {
    const one = join(dir, 'one-channel.json')
    writeFileSync(one, JSON.stringify(exports[1]))
    const groups = await readAll({ path: one }, 'groups')
    expect(groups.rows.map(label)).toEqual(['team:eng'])
    const messages = await readAll({ path: one }, 'messages')
    expect(messages.rows.map(label)).toEqual(['t-1', 't-2'])
    expect(messages.count).toBe(2)
  })

  it('a file that breaks off: the entities before the break are read, then one problem on `file`; count agrees', async () => {
    const text = readFileSync(fx.path, 'utf8')
    const cut = text.indexOf('"id": "t-2"') // inside the second channel's second message
    const broken = join(dir, 'broken.json')
    writeFileSync(broken, text.slice(0, cut))
    const { rows, count } = await readAll({ path: broken, maxElementBytes: fx.seed.maxElementBytes }, 'messages')
    expect(rows.length).toBe(count)
    const labels = rows.map(label)
    expect(labels[0]).toBe(`${broken}:file`)
    expect(labels).toContain('t-1')
    expect(labels).not.toContain('t-2')
    expect(labels).not.toContain('l-1')
    const first = rows[0]
    expect(first?.ok === false && first.reason).toMatch(/the export cannot be read on: the document breaks off at byte \d+/)
  })

  it('a file with no channel is SOURCE_INVALID naming the file and the layout it was read as', async () => {
    const empty = join(dir, 'not-an-export.json')
    writeFileSync(empty, JSON.stringify({ users: [] }))
    const err = await createConnector(SourceConfigSchema.parse({ connector: 'stream-chat', path: empty }))
      .open()
      .then(
        () => undefined,
        (e: unknown) => e,
      )
    expect(err).toBeInstanceOf(ChatferryError)
    expect((err as ChatferryError).code).toBe('SOURCE_INVALID')
    expect((err as Error).message).toContain(`${empty} holds no channel (read as a v1 JSON export)`)
  })

  it('a file that breaks before its first channel is SOURCE_INVALID saying where it broke', async () => {
    const cut = join(dir, 'cut.json')
    writeFileSync(cut, '[{"messages": [{"id": "a"}, {"id": "b"')
    const err = await createConnector(SourceConfigSchema.parse({ connector: 'stream-chat', path: cut }))
      .open()
      .then(
        () => undefined,
        (e: unknown) => e,
      )
    expect((err as ChatferryError).code).toBe('SOURCE_INVALID')
    expect((err as Error).message).toMatch(/holds no channel \(read as a v1 JSON export\): the document breaks off at byte \d+/)
  })

  it.each(['json', 'jsonl'] as const)(
    '%s: messages, groups and members read before the users are the rows and positions read after them',
    async (format) => {
      const f = writeStreamFixture(format)
      try {
        const config = SourceConfigSchema.parse({ connector: 'stream-chat', path: f.path, maxElementBytes: f.seed.maxElementBytes })
        const read = async (s: Awaited<ReturnType<ReturnType<typeof createConnector>['open']>>, entity: LegacyEntity) => {
          const out: unknown[] = []
          for await (const p of s.read(entity, { pageSize: 4 })) {
            out.push(...p.rows.map((r) => [label(r), p.cursor]))
          }
          return out
        }
        const entities: LegacyEntity[] = ['messages', 'groups', 'members']
        const before = await createConnector(config).open()
        const after = await createConnector(config).open()
        try {
          const usersFirst = await read(after, 'users')
          expect(usersFirst.length).toBeGreaterThan(0)
          for (const entity of entities) {
            const unread = await read(before, entity)
            expect(unread.length).toBeGreaterThan(0)
            expect(unread).toEqual(await read(after, entity))
            expect(await before.count(entity)).toBe(await after.count(entity))
          }
          // Reading the users later in the first session gives them as the second read them first.
          expect(await read(before, 'users')).toEqual(usersFirst)
          expect(await read(before, 'messages')).toEqual(await read(after, 'messages'))
        } finally {
          await before.close()
          await after.close()
        }
      } finally {
        await f.drop()
      }
    },
  )

  it('reads v2 lines under any name when format: jsonl is set, and refuses both path and api', async () => {
    const v2 = writeStreamFixture('jsonl')
    try {
      const renamed = join(dir, 'export.txt')
      writeFileSync(renamed, readFileSync(v2.path))
      const { rows } = await readAll({ path: renamed, format: 'jsonl', maxElementBytes: v2.seed.maxElementBytes }, 'groups')
      expect(rows.filter((r) => r.ok).length).toBe(7)
    } finally {
      await v2.drop()
    }
    const both = SourceConfigSchema.safeParse({ connector: 'stream-chat', path: 'x.json', api: {} })
    expect(both.success).toBe(false)
    expect(JSON.stringify(both.error?.issues)).toContain('give either path (an export file) or api (the REST API), not both')
  })
})
