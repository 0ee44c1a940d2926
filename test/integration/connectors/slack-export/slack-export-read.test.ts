/**
 * The Slack export connector on the fixture export, as a ZIP (Slack-style names without the UTF-8
 * flag, nested in a top-level folder) and as an unpacked folder: both read the same rows, exactly
 * the records and problems the seed predicts; the export's file token never leaves the connector.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import yauzl from 'yauzl'

import { createConnector, SourceConfigSchema } from '../../../../connectors/index.ts'
import { ChatferryError } from '../../../../src/errors.ts'
import type { SourceSession } from '../../../../src/model/connector.ts'
import { LEGACY_ENTITIES, type LegacyEntity, legacyIdOf } from '../../../../src/model/records.ts'
import type { ExpectedRow } from '../../../fixtures/expected-row.ts'
import { expectedSlack } from '../../../fixtures/slack-export/expected.ts'
import { type SlackFixture, writeSlackFixture } from '../../../fixtures/slack-export/fixture.ts'
import { EXPORT_TOKEN } from '../../../fixtures/slack-export/seed.ts'

type AnyRow = { ok: true; record: unknown } | { ok: false; legacyId: string; field: string }
const key = (entity: LegacyEntity, r: AnyRow) => (r.ok ? legacyIdOf(entity, r.record as never) : `${r.legacyId}!${r.field}`)
const comparable = (r: AnyRow): AnyRow => (r.ok ? { ok: true, record: r.record } : { ok: false, legacyId: r.legacyId, field: r.field })

async function readAll(s: SourceSession, entity: LegacyEntity, pageSize = 1000) {
  const rows: AnyRow[] = []
  for await (const page of s.read(entity, { pageSize })) {
    rows.push(...(page.rows as AnyRow[]))
  }
  return rows
}

describe.each(['zip', 'folder'] as const)('slack-export on the fixture as a %s', (layout) => {
  let fx: SlackFixture
  let session: SourceSession
  beforeAll(async () => {
    fx = await writeSlackFixture(layout)
    session = await createConnector(SourceConfigSchema.parse({ connector: 'slack-export', path: fx.path })).open()
  })
  afterAll(async () => {
    await session?.close()
    await fx?.drop()
  })

  for (const entity of LEGACY_ENTITIES) {
    it(`reads every ${entity} row as the seed predicts`, async () => {
      const want = (expectedSlack(fx.seed, { exportTime: fx.exportTime })[entity] as ExpectedRow<typeof entity>[]).map((r) => comparable(r as AnyRow))
      const got = (await readAll(session, entity, 3)).map(comparable)
      const sort = (rows: AnyRow[]) => [...rows].sort((a, b) => (key(entity, a) < key(entity, b) ? -1 : 1))
      expect(sort(got)).toEqual(sort(want))
      expect(await session.count(entity)).toBe(want.length)
    })
  }

  it('never passes on the export token of private file URLs', async () => {
    const rows = await readAll(session, 'messages')
    expect(JSON.stringify(rows)).not.toContain(EXPORT_TOKEN)
    expect(JSON.stringify(rows)).toContain('https://files.slack.com/files-pri/T01ACME-F01SHOT/shot.png')
  })
})

describe('slack-export: the export itself', () => {
  it('the fixture ZIP is Slack-style: entry names in UTF-8 without the UTF-8 flag, which a spec-following reader garbles', async () => {
    const fx = await writeSlackFixture('zip')
    try {
      const zip = await yauzl.openPromise(fx.path, { lazyEntries: true })
      const names: string[] = []
      for await (const e of zip.eachEntry()) {
        names.push(e.fileName)
        expect(e.generalPurposeBitFlag & 0x800).toBe(0)
      }
      zip.close()
      expect(names.some((n) => n.includes('café'))).toBe(false)
      expect(names.some((n) => n.includes('caf'))).toBe(true)
    } finally {
      await fx.drop()
    }
  })

  it('a folder or file that is not a Slack export fails before reading, saying what to set', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cf-slack-not-'))
    try {
      writeFileSync(join(dir, 'notes.txt'), 'hello')
      const err = await createConnector(SourceConfigSchema.parse({ connector: 'slack-export', path: dir }))
        .open()
        .then(
          () => undefined,
          (e: unknown) => e,
        )
      expect(err).toBeInstanceOf(ChatferryError)
      expect((err as ChatferryError).code).toBe('SOURCE_INVALID')
      expect((err as Error).message).toContain('source.path')
      const zipErr = await createConnector(SourceConfigSchema.parse({ connector: 'slack-export', path: join(dir, 'notes.txt') }))
        .open()
        .then(
          () => undefined,
          (e: unknown) => e,
        )
      expect((zipErr as ChatferryError).code).toBe('SOURCE_INVALID')
      expect((zipErr as Error).message).toContain('notes.txt')
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
