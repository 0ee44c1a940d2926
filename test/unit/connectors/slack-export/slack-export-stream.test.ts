/**
 * The Slack export's streamed reads: an element over the cap or not UTF-8 is one bad item and the
 * elements after it are read, whatever the chunk size; a large day file read in windows yields
 * the same items in the same order as the whole file sorted in memory.
 */
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { afterAll, describe, expect, it } from 'vitest'

import { openArchive } from '../../../../connectors/archive/archive.ts'
import type { ParsedItem } from '../../../../connectors/archive/array-file.ts'
import { type ArrayItem, jsonArrayItems } from '../../../../connectors/archive/json-array.ts'
import { createConnector, SourceConfigSchema } from '../../../../connectors/index.ts'
import { sortDay, sortedDay } from '../../../../connectors/slack-export/day-sort.ts'
import type { Cursor } from '../../../../src/model/connector.ts'
import { writeExportFolder } from '../../../fixtures/slack-export/generate.ts'

async function items(bytes: Buffer, chunk: number, max: number): Promise<ArrayItem[]> {
  const chunks: Buffer[] = []
  for (let i = 0; i < bytes.length; i += chunk) {
    chunks.push(bytes.subarray(i, i + chunk))
  }
  const out: ArrayItem[] = []
  for await (const item of jsonArrayItems(chunks, max)) {
    out.push(item)
  }
  return out
}

describe('jsonArrayItems: bad elements are single problems, the read goes on', () => {
  const big = JSON.stringify({ text: 'x'.repeat(5000) })
  const bytes = Buffer.concat([Buffer.from(`[{"a":1}, ${big}, {"b":"caf`), Buffer.from([0xe9]), Buffer.from('"}, {"c":[1,2,{"d":"]}"}]}]')])
  it.each([1, 7, 64, 4096, 1 << 20])('in chunks of %i bytes', async (chunk) => {
    const got = await items(bytes, chunk, 1024)
    expect(got.map((i) => i.kind)).toEqual(['element', 'bad', 'bad', 'element'])
    expect(got[1]?.kind === 'bad' ? got[1].reason : '').toContain(`an element of ${Buffer.byteLength(big)} bytes, over source.maxElementBytes (1024)`)
    expect(got[2]?.kind === 'bad' ? got[2].reason : '').toMatch(/not UTF-8 text: byte 0xE9 at offset 9/)
    expect(got[3]?.kind === 'element' ? JSON.parse(got[3].text) : undefined).toEqual({ c: [1, 2, { d: ']}' }] })
  })
})

describe('sortDay: by ts (stable), then the items without one in file order', () => {
  const item = (index: number, ts?: unknown): ParsedItem => ({ index, value: ts === undefined ? { text: 'x' } : { ts } })
  const order = (items: ParsedItem[]) => sortDay(items).map((i) => i.index)
  it.each([
    ['already in order (as Slack writes)', [item(0, '1.000001'), item(1, '1.000002'), item(2, '2')], [0, 1, 2]],
    ['a repeated ts keeps file order', [item(0, '5.5'), item(1, '5.500000'), item(2, '6')], [0, 1, 2]],
    ['out of order', [item(0, '3'), item(1, '1.5'), item(2, '2')], [1, 2, 0]],
    ['untimed items last, in file order', [item(0), item(1, '2'), item(2, 'soon'), item(3, '1')], [3, 1, 0, 2]],
    ['a broken item last', [{ index: 0, error: 'broken JSON' }, item(1, '1')], [1, 0]],
    ['past 2255, microseconds still decide', [item(0, '999999999999.000002'), item(1, '999999999999.000001')], [1, 0]],
  ])('%s', (_name, items, expected) => {
    expect(order(items)).toEqual(expected)
  })
})

describe('sortedDay: a large day file streamed in windows reads as the whole file sorted', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cf-slack-stream-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))
  // 300 messages out of order, a few without ts, one duplicate ts, and the file breaks off at the end.
  const elements = Array.from({ length: 300 }, (_, i) =>
    JSON.stringify(
      i % 50 === 7
        ? { type: 'message', text: `no ts ${i}` }
        : { type: 'message', user: 'U1', text: `m${i}`, ts: `1700000000.${String((i * 7919) % 1000).padStart(6, '0')}` },
    ),
  )
  const text = `[${elements.join(',\n')}, {"broken": `
  const root = writeExportFolder(join(dir, 'export'), [
    ['users.json', '[]'],
    ['channels.json', '[]'],
    ['general/2024-01-02.json', text],
  ])

  it.each([0, 1500, 50_000, 1 << 30])('with windows of %i bytes', async (windowBytes) => {
    const archive = await openArchive(root, { maxEntryBytes: 1 << 30, maxArchiveBytes: 1 << 30, maxElementBytes: 2048 })
    const got: ParsedItem[] = []
    for await (const batch of sortedDay(archive, 'general/2024-01-02.json', 2048, windowBytes)) {
      got.push(...batch)
    }
    const whole: ParsedItem[] = []
    for await (const item of jsonArrayItems([Buffer.from(text)])) {
      whole.push(item.kind === 'element' ? { index: item.index, value: JSON.parse(item.text) as unknown } : { index: item.index, error: item.reason })
    }
    expect(got).toEqual(sortDay(whole))
    expect(got.at(-1)).toMatchObject({ index: 300, error: 'the file breaks off before the array closes' })
  })
})

describe('slack-export: a read resumed from any cursor yields exactly the rest of a full read', () => {
  it('across refused entries, streamed day files and a ts repeated in a later day file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cf-slack-resume-'))
    try {
      const msg = (s: number, text: string) => ({ type: 'message', user: 'U1', text, ts: `1700000${String(s).padStart(3, '0')}.000100` })
      const large = Array.from({ length: 40 }, (_, i) => msg(100 + ((i * 17) % 40), `large ${i} ${'z'.repeat(100)}`))
      const root = writeExportFolder(join(dir, 'export'), [
        ['users.json', JSON.stringify([{ id: 'U1', name: 'u1', real_name: 'U One' }])],
        ['channels.json', JSON.stringify([{ id: 'C1', name: 'general', created: 1700000000, members: ['U1'] }])],
        ['general/2024-01-01.json', JSON.stringify([msg(1, 'a'), msg(2, 'b')])],
        ['general/2024-01-02.json', JSON.stringify(large)],
        ['general/2024-01-03.json', JSON.stringify([msg(2, 'b again'), msg(120, 'large again'), msg(300, 'c')])],
      ])
      symlinkSync(join(root, 'general', '2024-01-01.json'), join(root, 'general', '2024-01-04.json'))
      symlinkSync(join(root, 'users.json'), join(root, 'org_users.json'))
      const connector = createConnector(SourceConfigSchema.parse({ connector: 'slack-export', path: root, maxElementBytes: 1024 }))
      const session = await connector.open()
      try {
        for (const entity of ['users', 'messages'] as const) {
          const pages: { rows: unknown[]; cursor: Cursor }[] = []
          for await (const page of session.read(entity, { pageSize: 1 })) {
            pages.push({ rows: [...page.rows], cursor: page.cursor })
          }
          const all = pages.flatMap((p) => p.rows)
          expect(all.length).toBe(await session.count(entity))
          for (const [n, page] of pages.entries()) {
            const rest: unknown[] = []
            for await (const p of session.read(entity, { pageSize: 7, after: page.cursor })) {
              rest.push(...p.rows)
            }
            expect(rest, `${entity} after ${JSON.stringify(page.cursor)}`).toEqual(all.slice(n + 1))
          }
          if (entity === 'messages') {
            const problems = all.filter((r) => !(r as { ok: boolean }).ok) as { legacyId: string; reason: string }[]
            expect(problems.map((p) => p.legacyId).sort()).toEqual(['C1:1700000002.000100', 'C1:1700000120.000100', 'entry:general/2024-01-04.json'])
            expect(problems.find((p) => p.legacyId === 'C1:1700000120.000100')?.reason).toContain('general/2024-01-02.json')
          } else {
            expect(all.filter((r) => !(r as { ok: boolean }).ok)).toMatchObject([{ legacyId: 'entry:org_users.json', field: 'file' }])
          }
        }
      } finally {
        await session.close()
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
