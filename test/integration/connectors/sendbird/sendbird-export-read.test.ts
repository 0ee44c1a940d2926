/**
 * The Sendbird connector reading Data Export files that are not tidy: a record over
 * `maxElementBytes` is one problem naming its file and the file reads on (streamed, not read
 * whole); files that are neither JSON nor CSV are not read; an export over `maxArchiveBytes` is
 * refused before anything is read (SOURCE_INVALID); a JSON ZIP and a CSV ZIP of the same seed
 * read the same records.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'

import { describe, expect, it } from 'vitest'

import { createConnector, SourceConfigSchema } from '../../../../connectors/index.ts'
import { ChatferryError } from '../../../../src/errors.ts'
import type { SourceSession } from '../../../../src/model/connector.ts'
import { LEGACY_ENTITIES, type LegacyEntity, type LegacyMessage } from '../../../../src/model/records.ts'
import { writeSendbirdExports } from '../../../fixtures/sendbird/generate.ts'
import { SB, sendbirdSeed, T0 } from '../../../fixtures/sendbird/seed.ts'

async function rows(s: SourceSession, entity: LegacyEntity) {
  const out = []
  for await (const page of s.read(entity)) {
    out.push(...page.rows)
  }
  return out
}

const open = (exp: Record<string, unknown>) => createConnector(SourceConfigSchema.parse({ connector: 'sendbird', export: exp })).open()

describe('Sendbird Data Export files', () => {
  it('a record over maxElementBytes is a problem naming its file; the rest of the file is read; other files are ignored', async () => {
    const seed = sendbirdSeed()
    const fx = await writeSendbirdExports(seed, 'json', 'folder')
    try {
      const big = {
        message_id: 5000,
        type: 'MESG',
        channel_url: SB.general,
        user: { user_id: SB.bob },
        message: 'x'.repeat(3000),
        created_at: T0 + 900_000,
      }
      const after = {
        message_id: 5001,
        type: 'MESG',
        channel_url: SB.general,
        user: { user_id: SB.bob },
        message: 'after the big one',
        created_at: T0 + 901_000,
      }
      writeFileSync(join(fx.paths.messages, 'messages', 'messages_3.json'), JSON.stringify([big, after]))
      writeFileSync(join(fx.paths.messages, 'messages', 'README.txt'), 'not data')
      const s = await open({ ...fx.paths, maxElementBytes: 2048 })
      try {
        const got = await rows(s, 'messages')
        const problem = got.find((r) => !r.ok && r.reason.includes('messages_3.json'))
        expect(problem).toMatchObject({ ok: false, legacyId: '?', field: 'message' })
        expect(got.some((r) => r.ok && (r.record as LegacyMessage).id === '5001')).toBe(true)
        expect(got.some((r) => r.ok && (r.record as LegacyMessage).id === '5000')).toBe(false)
      } finally {
        await s.close()
      }
    } finally {
      await fx.drop()
    }
  })

  it('an export over maxArchiveBytes is refused before anything is read', async () => {
    const fx = await writeSendbirdExports(sendbirdSeed(), 'csv', 'zip')
    try {
      const err = await open({ ...fx.paths, maxArchiveBytes: 1024 }).then(
        () => undefined,
        (e: unknown) => e,
      )
      expect(err).toBeInstanceOf(ChatferryError)
      expect((err as ChatferryError).code).toBe('SOURCE_INVALID')
      expect((err as Error).message).toMatch(
        /the Sendbird export .*channels_export_csv\.zip inflates to \d+ bytes, over source\.export\.maxArchiveBytes \(1024\)/,
      )
    } finally {
      await fx.drop()
    }
  })

  it('a JSON ZIP and a CSV ZIP of the same application read the same records', async () => {
    const seed = sendbirdSeed()
    const json = await writeSendbirdExports(seed, 'json', 'zip')
    const csv = await writeSendbirdExports(seed, 'csv', 'zip')
    try {
      const a = await open(json.paths)
      const b = await open(csv.paths)
      try {
        for (const e of LEGACY_ENTITIES) {
          const records = async (s: SourceSession) => (await rows(s, e)).flatMap((r) => (r.ok ? [r.record] : []))
          expect(await records(b), e).toEqual(await records(a))
        }
      } finally {
        await a.close()
        await b.close()
      }
    } finally {
      await json.drop()
      await csv.drop()
    }
  })
})
