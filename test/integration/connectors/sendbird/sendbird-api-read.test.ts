/**
 * The Sendbird connector's Platform API reads against the emulator (test/fixtures/sendbird/
 * emulator.ts): pacing at the configured per-second GET limit (no 429 when the limit is the
 * source's own), a 429 storm and 5xx answers ridden out by waiting what `X-RateLimit-RetryAfter`
 * asks, retries that run out failing SOURCE_UNAVAILABLE without the token, an aborted read resumed
 * from its last cursor in a new session with exactly the remaining rows, and only GETs.
 */
import { afterEach, describe, expect, it } from 'vitest'

import { createConnector, SourceConfigSchema } from '../../../../connectors/index.ts'
import { ChatferryError } from '../../../../src/errors.ts'
import type { Cursor, SourceSession } from '../../../../src/model/connector.ts'
import { LEGACY_ENTITIES, type LegacyEntity, legacyIdOf } from '../../../../src/model/records.ts'
import { type Emulator, startSendbirdEmulator } from '../../../fixtures/sendbird/emulator.ts'
import { expectedSendbird } from '../../../fixtures/sendbird/expected.ts'
import { SB_TOKEN, sendbirdSeed } from '../../../fixtures/sendbird/seed.ts'

const seed = sendbirdSeed()
let emu: Emulator | undefined
afterEach(async () => {
  await emu?.close()
  emu = undefined
})

const open = (baseUrl: string, api: Record<string, unknown> = {}) =>
  createConnector(
    SourceConfigSchema.parse({ connector: 'sendbird', pageSize: 2, api: { appId: 'FIXTURE-APP', apiToken: SB_TOKEN, baseUrl, ...api } }),
  ).open()

async function ids(s: SourceSession, entity: LegacyEntity, after?: Cursor, signal?: AbortSignal) {
  const got: string[] = []
  for await (const page of s.read(entity, { ...(after ? { after } : {}), ...(signal ? { signal } : {}) })) {
    got.push(...page.rows.map((r) => (r.ok ? legacyIdOf(entity, r.record) : `${r.legacyId}!${r.field}`)))
  }
  return got
}

/** The most requests that started within any one second. */
const busiestSecond = (log: Emulator['log']) => Math.max(...log.map((r) => log.filter((x) => x.at >= r.at && x.at < r.at + 1000).length))

describe('Sendbird over the Platform API (emulator)', () => {
  it('stays within the configured GET rate: the emulator at the same limit never answers 429; only GETs', async () => {
    emu = await startSendbirdEmulator(seed, { perSecond: 8 })
    const s = await open(emu.baseUrl, { requestsPerSecond: 8 })
    try {
      for (const e of LEGACY_ENTITIES) {
        expect((await ids(s, e)).length).toBe(expectedSendbird(seed, 'api')[e].length)
      }
      expect(await s.count('messages')).toBe(expectedSendbird(seed, 'api').messages.length)
    } finally {
      await s.close()
    }
    expect(emu.log.length).toBeGreaterThan(16)
    expect(emu.log.filter((r) => r.status === 429)).toEqual([])
    expect(busiestSecond(emu.log)).toBeLessThanOrEqual(8)
    expect(new Set(emu.log.map((r) => r.method))).toEqual(new Set(['GET']))
  }, 60_000)

  it('a 429 storm: waits what X-RateLimit-RetryAfter asks each time, then reads every row', async () => {
    emu = await startSendbirdEmulator(seed, { retryAfterS: 1 })
    const s = await open(emu.baseUrl, { requestsPerSecond: 100 })
    try {
      emu.storm(3)
      const started = Date.now()
      expect((await ids(s, 'users')).sort()).toEqual(
        expectedSendbird(seed, 'api')
          .users.map((r) => (r.ok ? r.record.id : `${r.legacyId}!${r.field}`))
          .sort(),
      )
      expect(Date.now() - started).toBeGreaterThanOrEqual(3000)
    } finally {
      await s.close()
    }
    const statuses = emu.log.map((r) => r.status)
    expect(statuses.filter((x) => x === 429)).toHaveLength(3)
    const storm = emu.log.filter((r) => r.status === 429).map((r) => r.at)
    for (let i = 1; i < storm.length; i++) {
      expect((storm[i] as number) - (storm[i - 1] as number)).toBeGreaterThanOrEqual(990)
    }
  }, 60_000)

  it('5xx answers are retried; retries that run out fail SOURCE_UNAVAILABLE naming the request, never the token', async () => {
    emu = await startSendbirdEmulator(seed)
    const s = await open(emu.baseUrl, { requestsPerSecond: 100, retries: 2 })
    try {
      emu.storm(2, 500)
      expect((await ids(s, 'groups')).length).toBe(expectedSendbird(seed, 'api').groups.length)
      emu.storm(10, 429)
      const err = await ids(s, 'members').then(
        () => undefined,
        (e: unknown) => e,
      )
      expect(err).toBeInstanceOf(ChatferryError)
      expect((err as ChatferryError).code).toBe('SOURCE_UNAVAILABLE')
      expect((err as Error).message).toMatch(
        /Sendbird application FIXTURE-APP at http:\/\/127\.0\.0\.1:\d+: GET \/v3\/group_channels still failed after 3 attempts: rate limited \(HTTP 429, code 500910/,
      )
      expect(`${(err as Error).message}${(err as Error).stack}`).not.toContain(SB_TOKEN)
    } finally {
      await s.close()
    }
  }, 60_000)

  it('an aborted read resumes from its last cursor, in a new session, with exactly the remaining rows', async () => {
    emu = await startSendbirdEmulator(seed)
    const whole = await (async () => {
      const s = await open(emu!.baseUrl, { requestsPerSecond: 200 })
      try {
        return await ids(s, 'messages')
      } finally {
        await s.close()
      }
    })()
    for (const stopAfter of [1, 3, 6]) {
      const s = await open(emu.baseUrl, { requestsPerSecond: 200 })
      const ac = new AbortController()
      const seen: string[] = []
      let cursor: Cursor | undefined
      let pages = 0
      await expect(
        (async () => {
          for await (const page of s.read('messages', { signal: ac.signal })) {
            seen.push(...page.rows.map((r) => (r.ok ? r.record.id : `${r.legacyId}!${r.field}`)))
            cursor = JSON.parse(JSON.stringify(page.cursor)) as Cursor
            if (++pages === stopAfter) {
              ac.abort()
            }
          }
        })(),
      ).rejects.toThrow()
      await s.close()
      const again = await open(emu.baseUrl, { requestsPerSecond: 200 })
      try {
        expect([...seen, ...(await ids(again, 'messages', cursor))]).toEqual(whole)
      } finally {
        await again.close()
      }
    }
  }, 60_000)

  it("a resumed read whose last message was deleted meanwhile reads on from that message's time: nothing lost, nothing twice", async () => {
    const live = sendbirdSeed()
    emu = await startSendbirdEmulator(live)
    const s = await open(emu.baseUrl, { requestsPerSecond: 200 })
    const pages: { ids: string[]; cursor: Cursor }[] = []
    try {
      for await (const page of s.read('messages')) {
        pages.push({ ids: page.rows.map((r) => (r.ok ? r.record.id : `${r.legacyId}!${r.field}`)), cursor: page.cursor })
      }
    } finally {
      await s.close()
    }
    // Page 1 ends at 1001 ("Hello @bob", 60 s), which shares its time with 1002: delete 1001 at the source.
    const cut = pages[0] as { ids: string[]; cursor: Cursor }
    expect(cut.cursor.m).toBe('1001')
    const gone = live.messages.find((m) => m.raw.message_id === 1001)
    ;(gone?.raw as Record<string, unknown>).is_removed = true
    const again = await open(emu.baseUrl, { requestsPerSecond: 200 })
    try {
      expect(await ids(again, 'messages', cut.cursor)).toEqual(pages.slice(1).flatMap((p) => p.ids))
    } finally {
      await again.close()
    }
  })
})
