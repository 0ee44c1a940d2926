/**
 * The Slack export's streamed reads: an element over the cap or not UTF-8 is one bad item and the
 * elements after it are read, whatever the chunk size; a large day file read in windows yields
 * the same items in the same order as the whole file sorted in memory.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { afterAll, describe, expect, it } from 'vitest'

import { openArchive } from '../../connectors/slack-export/archive/archive.ts'
import type { ParsedItem } from '../../connectors/slack-export/day-file.ts'
import { sortDay, sortedDay } from '../../connectors/slack-export/day-sort.ts'
import { type ArrayItem, jsonArrayItems } from '../../connectors/slack-export/json-array.ts'
import { writeExportFolder } from '../fixtures/slack-export/generate.ts'

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
