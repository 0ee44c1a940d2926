/**
 * A plan's thread replies do not depend on how the read is paged. A reply finds its parent on its
 * own page, on the page before (which the planner may still be writing while it maps the next:
 * `src/plan/page-pipeline.ts`) or on any earlier page (the sink's lookup). Planned at page sizes 1,
 * 2, 3, 7 and 1000, into the ledger and as a dry run, on both ledgers, over a generic-SQL source
 * (SQLite) whose replies point back one, two and many messages, to a deleted message, to a message
 * read later and to none: every page size gives the counts predicted here from the fixture (a reply
 * is quoted exactly when its parent was read before it and is not deleted), and the ledger holds the
 * same payloads, each quoted reply carrying its parent's text.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { createConnector, SourceConfigSchema } from '../../../connectors/index.ts'
import { type OutcomeCounts, PoliciesSchema } from '../../../mappings/index.ts'
import { dryRunPlan } from '../../../src/plan/dry-run.ts'
import { planJob } from '../../../src/plan/plan-job.ts'
import type { LedgerStore } from '../../../src/state/store.ts'
import { G0, genericPerson, genericSourceConfig, loadGenericSqlFixture, type Row, sqlTime } from '../../fixtures/generic-sql/fixture.ts'
import { useBothLedgers } from '../../helpers/both-ledgers.ts'

const PAGE_SIZES = [1, 2, 3, 7, 1000]
const BLOCKS = 4
const MIN = 60_000
const policies = PoliciesSchema.parse({ retention: { oldMessages: 'send' }, threads: { quoteParent: true } })
const ledgers = useBothLedgers('cf_plan_page_size')

interface Line {
  readonly lid: number
  readonly parent: number | null
  readonly removed: boolean
}

/** Ten lines a block; a reply points at `parent` (lids of later blocks reach into earlier ones). */
function chain(): Line[] {
  const lines: Line[] = []
  for (let b = 0; b < BLOCKS; b++) {
    const base = 10 * b
    const add = (n: number, parent: number | null, removed = false) => lines.push({ lid: base + n, parent, removed })
    add(1, null)
    add(2, base + 1) // one back
    add(3, base + 2) // one back, a reply to a reply
    add(4, base + 1) // three back
    add(5, null, true) // deleted: skipped
    add(6, base + 5) // to the deleted message
    add(7, 999) // to a message the source does not hold
    add(8, base + 9) // to a message read after it
    add(9, null)
    add(10, b === 0 ? base + 9 : base - 1) // the previous block's ninth
  }
  return lines
}

const body = (lid: number) => `m${String(lid).padStart(3, '0')} says hello to the thread`

function seedRows(lines: readonly Line[]) {
  const person = (pid: number): Row => genericPerson(pid, G0 / 1000 - 86400)
  const room: Row = {
    rid: 'r-main',
    title: 'Main',
    visibility: 'public',
    pass: null,
    owner: 1,
    info: null,
    created_iso: '2024-02-01T08:00:00Z',
    closed_iso: null,
  }
  const chatLine = (l: Line): Row => ({
    lid: l.lid,
    author: 1 + (l.lid % 3),
    room: 'r-main',
    to_pid: null,
    body: body(l.lid),
    kind: 'text',
    files: null,
    posted: sqlTime(G0 + l.lid * MIN),
    edited: null,
    removed: l.removed ? sqlTime(G0 + (l.lid + 1) * MIN) : null,
    parent: l.parent,
    reacts: null,
    ats: null,
    modified: sqlTime(G0 + l.lid * MIN),
  })
  return {
    people: [1, 2, 3].map(person),
    rooms: [room],
    room_people: [1, 2, 3].map((pid): Row => ({ rid: 'r-main', pid, role: 'member', blocked: false, since: sqlTime(G0) })),
    chat_lines: lines.map(chatLine),
  }
}

/** What the fixture predicts, from its lines alone. */
function predict(lines: readonly Line[]) {
  const byLid = new Map(lines.map((l) => [l.lid, l]))
  const replies = lines.filter((l) => l.parent !== null && !l.removed)
  const quotedOf = (l: Line) => {
    const p = l.parent === null ? undefined : byLid.get(l.parent)
    return p !== undefined && p.lid < l.lid && !p.removed ? p : undefined
  }
  const quoted = new Map(replies.flatMap((l) => (quotedOf(l) ? [[l.lid, quotedOf(l) as Line] as const] : [])))
  return {
    threads: { flattened: replies.length, quoted: quoted.size, 'parent-unknown': replies.length - quoted.size },
    quoted,
    replies,
  }
}

const lines = chain()
const want = predict(lines)
let dir: string
let url: string

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cf-page-size-'))
  url = `sqlite:${join(dir, 'source.db')}`
  await loadGenericSqlFixture('sqlite', url, seedRows(lines))
})

afterAll(() => {
  rmSync(dir, { recursive: true, force: true })
})

async function withSession<T>(
  pageSize: number,
  work: (session: Awaited<ReturnType<ReturnType<typeof createConnector>['open']>>) => Promise<T>,
): Promise<T> {
  const session = await createConnector(SourceConfigSchema.parse(genericSourceConfig(url, pageSize))).open()
  try {
    return await work(session)
  } finally {
    await session.close()
  }
}

const threadsOf = (outcomes: OutcomeCounts) => {
  const t = outcomes.threads ?? {}
  return { flattened: t.flattened ?? 0, quoted: t.quoted ?? 0, 'parent-unknown': t['parent-unknown'] ?? 0 }
}

/** The planned messages' payloads in the ledger, by legacy id. */
async function payloads(store: LedgerStore, jobId: string): Promise<Map<string, { data?: { text?: string } }>> {
  const rows = await store.planLookups.messages(
    jobId,
    lines.map((l) => String(l.lid)),
  )
  return new Map(rows.filter((r) => r.payload !== null).map((r) => [r.legacy_id, JSON.parse(r.payload as string)]))
}

describe.each(ledgers.stores)('thread replies at every page size, on the $name ledger', (ledger) => {
  // Sanity of the fixture: each kind of reply is there.
  expect(want.threads.quoted).toBeGreaterThanOrEqual(4 * BLOCKS - 1)
  expect(want.threads['parent-unknown']).toBeGreaterThanOrEqual(3 * BLOCKS)

  it('planned into the ledger: the predicted counts and the same payloads, quotes included', async () => {
    const store = ledger.store as LedgerStore
    const seen: Map<string, unknown>[] = []
    for (const pageSize of PAGE_SIZES) {
      const jobId = `pages-${pageSize}`
      await store.ensureJob(jobId, 'page-size-app')
      const summary = await withSession(pageSize, (session) => planJob({ jobId, store, session, policies, now: Date.now(), pageSize }))
      expect(threadsOf(summary.outcomes), `page size ${pageSize}`).toEqual(want.threads)
      const planned = await payloads(store, jobId)
      for (const [lid, parent] of want.quoted) {
        const text = planned.get(String(lid))?.data?.text ?? ''
        expect(text, `line ${lid} at page size ${pageSize}`).toContain(`m${String(parent.lid).padStart(3, '0')} says`)
        expect(text.endsWith(body(lid))).toBe(true)
      }
      seen.push(planned)
    }
    for (const [i, planned] of seen.entries()) {
      expect(Object.fromEntries(planned), `page size ${PAGE_SIZES[i]}`).toEqual(Object.fromEntries(seen[seen.length - 1] as Map<string, unknown>))
    }
  })

  it('as a dry run: the predicted counts at every page size', async () => {
    const store = ledger.store as LedgerStore
    for (const pageSize of PAGE_SIZES) {
      const result = await withSession(pageSize, (session) =>
        dryRunPlan({ jobId: `dry-${pageSize}`, store, session, policies, now: Date.now(), pageSize }),
      )
      expect(threadsOf(result.summary.outcomes), `page size ${pageSize}`).toEqual(want.threads)
      expect(result.entities.messages.fates.new, `page size ${pageSize}`).toBe(lines.length - BLOCKS)
    }
  })
})
