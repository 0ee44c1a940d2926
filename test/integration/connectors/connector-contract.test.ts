/**
 * The connector contract: one suite, run against every connector × source listed in
 * test/helpers/contract-cases.ts (generic-sql on Postgres, MariaDB and SQLite; mattermost on
 * Postgres and MariaDB; …). Expectations come from the fixtures' seed rows
 * (test/fixtures/<system>/expected.ts), never from connector output.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { createConnector, SourceConfigSchema } from '../../../connectors/index.ts'
import { ChatferryError } from '../../../src/errors.ts'
import type { Cursor, Page, ReadOptions, SourceConnector, SourceSession } from '../../../src/model/connector.ts'
import { LEGACY_ENTITIES, type LegacyEntity, legacyIdOf, type LegacyRecordOf } from '../../../src/model/records.ts'
import type { ExpectedRow } from '../../fixtures/expected-row.ts'
import { CONTRACT_CASES } from '../../helpers/contract-cases.ts'
import type { ContractEnv } from '../../helpers/contract-env.ts'

/** A read row as the suite compares it: records whole, problems by legacy id and field. */
function comparable<E extends LegacyEntity>(entity: E, row: Page<LegacyRecordOf[E]>['rows'][number] | ExpectedRow<E>) {
  return row.ok ? { ok: true, record: row.record } : { ok: false, legacyId: row.legacyId, field: row.field }
}
function idOf<E extends LegacyEntity>(entity: E, row: Page<LegacyRecordOf[E]>['rows'][number] | ExpectedRow<E>): string {
  return row.ok ? legacyIdOf(entity, row.record) : row.legacyId
}
/** A read row's identity: its legacy id, and for a problem its instance (twins of one legacy id share the id). */
function rowKey<E extends LegacyEntity>(entity: E, row: Page<LegacyRecordOf[E]>['rows'][number]): string {
  return row.ok ? legacyIdOf(entity, row.record) : `${row.legacyId}${row.instance !== undefined ? ` (${row.instance})` : ''}`
}
function sortById<E extends LegacyEntity, R extends Page<LegacyRecordOf[E]>['rows'][number] | ExpectedRow<E>>(entity: E, rows: R[]): R[] {
  return [...rows].sort((a, b) => (idOf(entity, a) < idOf(entity, b) ? -1 : idOf(entity, a) > idOf(entity, b) ? 1 : 0))
}

async function readAll<E extends LegacyEntity>(session: SourceSession, entity: E, options: ReadOptions = {}) {
  const pages: Page<LegacyRecordOf[E]>[] = []
  for await (const page of session.read(entity, options)) {
    pages.push(page)
  }
  return { pages, rows: pages.flatMap((p) => p.rows) }
}

for (const { title, skip, open } of CONTRACT_CASES) {
  describe.skipIf(skip !== undefined)(`${title}${skip ? ` (skipped: ${skip})` : ''}`, () => {
    let env: ContractEnv
    let source: SourceConnector

    beforeAll(async () => {
      env = await open()
      source = createConnector(SourceConfigSchema.parse(env.config()))
    })
    afterAll(async () => {
      await env?.drop()
    })

    async function withSession<T>(fn: (s: SourceSession) => Promise<T>, c: SourceConnector = source): Promise<T> {
      const s = await c.open()
      try {
        return await fn(s)
      } finally {
        await s.close()
      }
    }

    it('counts every entity as the fixture predicts', async () => {
      await withSession(async (s) => {
        const expected = env.expected()
        for (const e of LEGACY_ENTITIES) {
          expect({ e, n: await s.count(e) }).toEqual({ e, n: expected[e].length })
        }
      })
    })

    for (const entity of LEGACY_ENTITIES) {
      it(`maps every ${entity} row as documented (records and problems derived from the seed)`, async () => {
        await withSession(async (s) => {
          const { rows } = await readAll(s, entity)
          const got = sortById(entity, rows).map((r) => comparable(entity, r))
          const want = sortById(entity, env.expected()[entity] as ExpectedRow<typeof entity>[]).map((r) => comparable(entity, r))
          expect(got).toEqual(want)
        })
      })
    }

    it('reports bad rows as RowProblems with legacy id and field, and reads on past them', async () => {
      await withSession(async (s) => {
        for (const entity of LEGACY_ENTITIES) {
          const { rows } = await readAll(s, entity, { pageSize: 3 })
          const problems = rows.filter((r) => !r.ok)
          const wantProblems = env.expected()[entity].filter((r) => !r.ok)
          expect(problems.map((p) => (p.ok ? '' : `${p.legacyId}:${p.field}`)).sort()).toEqual(
            wantProblems.map((p) => (p.ok ? '' : `${p.legacyId}:${p.field}`)).sort(),
          )
          for (const p of problems) {
            if (!p.ok) {
              expect(p.reason.length).toBeGreaterThan(0)
            }
          }
          expect(rows.length).toBe(env.expected()[entity].length)
        }
        const messageProblems = env.expected().messages.filter((r) => !r.ok).length
        expect(messageProblems).toBeGreaterThanOrEqual(env.minMessageProblems)
      })
    })

    it('pages across boundaries with duplicate timestamps: same rows, in order, none twice', async () => {
      await withSession(async (s) => {
        for (const entity of LEGACY_ENTITIES) {
          const whole = (await readAll(s, entity)).rows.map((r) => rowKey(entity, r))
          for (const pageSize of [1, 2, 3]) {
            const { pages, rows } = await readAll(s, entity, { pageSize })
            for (const p of pages) {
              expect(p.rows.length).toBeLessThanOrEqual(pageSize)
            }
            const ids = rows.map((r) => rowKey(entity, r))
            expect(ids).toEqual(whole)
            expect(new Set(ids).size).toBe(ids.length)
          }
        }
        // The fixture really has ties in the message key's time column.
        const sent = (await readAll(s, 'messages')).rows.flatMap((r) => (r.ok ? [r.record.sentAt] : []))
        expect(sent.length - new Set(sent).size).toBeGreaterThanOrEqual(2)
      })
    })

    it('resumes from a cursor taken mid-table with exactly the remaining rows', async () => {
      await withSession(async (s) => {
        for (const entity of LEGACY_ENTITIES) {
          const { pages } = await readAll(s, entity, { pageSize: 2 })
          if (pages.length < 2) {
            continue
          }
          const cursor = JSON.parse(JSON.stringify((pages[1] as Page<unknown>).cursor)) as Cursor
          const rest = await readAll(s, entity, { pageSize: 2, after: cursor })
          expect(rest.rows.map((r) => idOf(entity, r))).toEqual(pages.slice(2).flatMap((p) => p.rows.map((r) => idOf(entity, r))))
        }
      })
      // …also in a new session (a resumed run).
      const first = await withSession(async (s) => (await readAll(s, 'messages', { pageSize: 4 })).pages)
      const rest = await withSession((s) => readAll(s, 'messages', { pageSize: 4, after: (first[0] as Page<unknown>).cursor }))
      expect(rest.rows.map((r) => idOf('messages', r))).toEqual(first.slice(1).flatMap((p) => p.rows.map((r) => idOf('messages', r))))
    })

    it('readKeys: the legacy id of every record, keys only, in pages of any size, from its own snapshot', async () => {
      const keysOf = async (s: SourceSession, entity: LegacyEntity, pageSize?: number) => {
        const keys: string[] = []
        for await (const page of (s.readKeys as NonNullable<SourceSession['readKeys']>)(entity, pageSize ? { pageSize } : {}) ?? []) {
          keys.push(...page)
        }
        return keys
      }
      await withSession(async (s) => {
        expect(s.readKeys).toBeTypeOf('function')
        for (const entity of LEGACY_ENTITIES) {
          const records = (await readAll(s, entity)).rows.flatMap((r) => (r.ok ? [legacyIdOf(entity, r.record)] : []))
          expect(records.length, entity).toBeGreaterThan(0)
          for (const pageSize of [1, 2, undefined]) {
            const keys = new Set(await keysOf(s, entity, pageSize))
            expect(
              records.filter((id) => !keys.has(id)),
              `${entity} records missing from the keys (pageSize ${pageSize})`,
            ).toEqual([])
          }
        }
      })
      // A removed row is gone from a later snapshot's keys; a snapshot taken before still has it.
      const mutation = env.mutation
      if (mutation === undefined) {
        return // a static export: nothing can remove a row under an open snapshot
      }
      const id = await mutation.insertMessage()
      const before = await source.open()
      try {
        expect(await keysOf(before, 'messages')).toContain(id)
        await mutation.removeMessage(id)
        expect(await keysOf(before, 'messages')).toContain(id)
      } finally {
        await before.close()
      }
      expect(await withSession((s) => keysOf(s, 'messages'))).not.toContain(id)
    })

    it('reads one snapshot: rows inserted by another connection during the read are not seen', async (ctx) => {
      const mutation = env.mutation
      if (mutation === undefined) {
        ctx.skip('a static export: no other connection can write it')
        return
      }
      let inserted: string | undefined
      try {
        await withSession(async (s) => {
          const before = await s.count('messages')
          const seen: string[] = []
          for await (const page of s.read('messages', { pageSize: 2 })) {
            if (inserted === undefined) {
              inserted = await mutation.insertMessage()
            }
            seen.push(...page.rows.map((r) => idOf('messages', r)))
          }
          expect(seen).not.toContain(inserted)
          expect(seen.length).toBe(before)
          expect(await s.count('messages')).toBe(before)
        })
        // A new snapshot sees it.
        await withSession(async (s) => {
          const { rows } = await readAll(s, 'messages')
          expect(rows.map((r) => idOf('messages', r))).toContain(inserted)
        })
      } finally {
        if (inserted !== undefined) {
          await mutation.removeMessage(inserted)
        }
      }
    })

    it('releases the connection when the consumer breaks out, and on close', async () => {
      const s = await source.open()
      try {
        expect(await env.openConnections?.()).not.toBe(0)
        for await (const page of s.read('messages', { pageSize: 2 })) {
          expect(page.rows.length).toBe(2)
          break
        }
        // The session is idle again: another read runs to completion at once.
        const { rows } = await readAll(s, 'users')
        expect(rows.length).toBe(env.expected().users.length)
        const ac = new AbortController()
        const aborted = (async () => {
          for await (const _ of s.read('messages', { pageSize: 1, signal: ac.signal })) {
            ac.abort()
          }
        })()
        await expect(aborted).rejects.toThrow()
        expect((await readAll(s, 'groups')).rows.length).toBe(env.expected().groups.length)
      } finally {
        await s.close()
        await s.close() // idempotent
      }
      // The server drops a closed session's thread asynchronously (MariaDB lists it in its
      // processlist for a moment after COM_QUIT), so wait for the count to settle before judging.
      let open = await env.openConnections?.()
      for (let i = 0; i < 50 && open !== undefined && open > 0; i++) {
        await new Promise((r) => setTimeout(r, 100))
        open = await env.openConnections?.()
      }
      if (open !== undefined) {
        expect(open).toBe(0)
      }
    })

    it('delta mode returns only rows changed at or after the watermark', async () => {
      await withSession(async (s) => {
        const since = env.deltaSince
        const want = env.expected(since)
        let total = 0
        for (const entity of LEGACY_ENTITIES) {
          const { rows, pages } = await readAll(s, entity, { since, pageSize: 2 })
          expect(rows.map((r) => idOf(entity, r)).sort()).toEqual(want[entity].map((r) => idOf(entity, r)).sort())
          expect(await s.count(entity, { since })).toBe(want[entity].length)
          total += rows.length
          const last = pages.at(-1)
          if (last?.watermark !== undefined) {
            expect(last.watermark).toBeGreaterThanOrEqual(since)
          }
        }
        expect(total).toBeGreaterThan(0)
        expect(total).toBeLessThan(LEGACY_ENTITIES.reduce((n, e) => n + env.expected()[e].length, 0))
      })
    })

    it('fails with SOURCE_UNAVAILABLE naming the source but never its password when unreachable', async () => {
      const c = createConnector(SourceConfigSchema.parse(env.unreachable.config))
      const err = await c.open().then(
        () => undefined,
        (e: unknown) => e,
      )
      expect(err).toBeInstanceOf(ChatferryError)
      expect((err as ChatferryError).code).toBe('SOURCE_UNAVAILABLE')
      const text = `${(err as Error).message} ${String((err as Error).stack)}`
      expect((err as Error).message).toContain(env.unreachable.names)
      if (env.unreachable.secret !== undefined) {
        expect(text).not.toContain(env.unreachable.secret)
      }
    })

    it('fails before reading any row when a query lacks a required column, naming it', async (ctx) => {
      const missing = env.missingColumn
      if (missing === undefined) {
        ctx.skip('its queries are not configurable')
        return
      }
      const c = createConnector(SourceConfigSchema.parse(missing.config))
      const err = await c.open().then(
        () => undefined,
        (e: unknown) => e,
      )
      expect(err).toBeInstanceOf(ChatferryError)
      expect((err as ChatferryError).code).toBe('CONFIG_INVALID')
      expect((err as Error).message).toContain(`\`${missing.column}\``)
      expect((err as Error).message).toContain('messages')
      // And the connection it opened is gone.
      // The server drops a closed session's thread asynchronously (MariaDB lists it in its
      // processlist for a moment after COM_QUIT), so wait for the count to settle before judging.
      let open = await env.openConnections?.()
      for (let i = 0; i < 50 && open !== undefined && open > 0; i++) {
        await new Promise((r) => setTimeout(r, 100))
        open = await env.openConnections?.()
      }
      if (open !== undefined) {
        expect(open).toBe(0)
      }
    })
  })
}
