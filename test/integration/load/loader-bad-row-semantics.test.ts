/**
 * The loader against each way the platform may treat a request holding a bad message row, and
 * against transient 500s after a partial write (issue 24; the sandbox's `badRowCommit` and
 * `faults.partialCommit500` with `partialCommitShape`): whatever the platform wrote before its
 * 500, a row not found afterwards goes again, and a row is rejected only on the platform's 500 to
 * a request that held it alone, with that answer. Proven from the sandbox's request log
 * (test/helpers/bad-row-log.ts), not from the ledger or the sandbox's unique keys: every good row
 * created exactly once and never carried again after it was written, each bad row's last request
 * that row alone; the ledger rejects exactly the bad rows, and the import requests stay within
 * the bound src/load/README.md gives. Two mutants of the loader's bookkeeping (ledger triggers: the
 * rows a read-back found are sent again; the rows after a bad one are taken as written and never
 * sent) show the log's reading fails where the sandbox's keys, or the ledger, look right. SIGKILLs
 * during the isolation: loader-isolation-kills.test.ts.
 */
import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'

import type { AppSettingsPatch } from '../../../src/sandbox/app-settings.ts'
import { inspectLedger } from '../../../src/state/inspect-ledger.ts'
import { checkBadRowLog, readBadRowLog } from '../../helpers/bad-row-log.ts'
import { auditDeliveries, describeViolations } from '../../helpers/delivery-audit.ts'
import { messages, users } from '../../helpers/ledger-fixtures.ts'
import { loadOnce, sandboxKeys, useLoaderFixture } from '../../helpers/loader-harness.ts'

const fx = useLoaderFixture('cf_badsem')

const N = 300
/**
 * The bad rows, placed where each reading bites: the first row of a batch (a platform that stops
 * there writes nothing), two neighbours, the last row of a batch, one in the middle.
 */
const BAD: Record<string, (p: Record<string, unknown>) => void> = {
  m0: (p) => (p.sender = 'ghost'),
  m60: (p) => (p.receiver = 'nobody'),
  m61: (p) => (p.sender = 'ghost'),
  m149: (p) => (p.receiver = 'nobody'),
  m230: (p) => (p.sender = 'ghost'),
}

async function scenario(name: string, settings: AppSettingsPatch, withBad: boolean) {
  const app = await fx.sb.createApp({ id: name, settings: { requestsPerMinute: 1000, windowMs: 10_000, ...settings } })
  await fx.store.ensureJob(name, app.id)
  await fx.store.planItems(name, 'users', users(6))
  const msgs = messages(N, 6)
  for (const [i, m] of msgs.entries()) {
    const p = m.payload as { data: Record<string, unknown> }
    // Half as chatferry writes them (legacy ids in metadata), half matched by fingerprint.
    if (i % 2 === 0) {
      p.data.metadata = { legacy: { id: m.legacyId } }
    }
    if (withBad) {
      BAD[m.targetKey]?.(m.payload as Record<string, unknown>)
    }
  }
  await fx.store.planItems(name, 'messages', msgs)
  const bad = new Set(withBad ? Object.keys(BAD) : [])
  const good = new Set(msgs.map((m) => m.targetKey).filter((k) => !bad.has(k)))
  return { app, good, bad }
}

const load = (jobId: string, app: { id: string; baseUrl: string; apiKey: string }) =>
  loadOnce({
    store: fx.store,
    stateUrl: fx.tdb.url,
    jobId,
    appId: app.id,
    baseUrl: app.baseUrl,
    apiKey: app.apiKey,
    requestsPerMinute: 6000,
    settings: { quotaWindowMs: 10_000, maxAttempts: 2 },
  })

const cases: { name: string; settings: AppSettingsPatch; withBad: boolean; maxRatio: number }[] = [
  { name: 'writes-all-good', settings: {}, withBad: true, maxRatio: 1 },
  { name: 'stops-at-bad-row', settings: { badRowCommit: 'stop-at-bad-row' }, withBad: true, maxRatio: 1.15 },
  { name: 'transient-prefix', settings: { faults: { partialCommit500: 0.3, partialCommitShape: 'prefix', seed: 9 } }, withBad: false, maxRatio: 1.3 },
  {
    name: 'stops-and-transient',
    settings: { badRowCommit: 'stop-at-bad-row', faults: { partialCommit500: 0.2, partialCommitShape: 'prefix', seed: 3 } },
    withBad: true,
    maxRatio: 1.6,
  },
  { name: 'transient-subset', settings: { faults: { partialCommit500: 0.3, seed: 8 } }, withBad: false, maxRatio: 4 },
]

describe('a row is rejected only on the platform’s word about that row', () => {
  it.each(cases)('$name: every good row created exactly once, only the bad rows rejected, each with the platform’s answer', async (c) => {
    const { app, good, bad } = await scenario(`sem-${c.name}`, c.settings, c.withBad)
    const jobId = `sem-${c.name}`
    const out = await load(jobId, app)
    expect(out.status).toBe(bad.size > 0 ? 'rejected' : 'done')

    const rejects = await fx.store.listRejects(jobId)
    expect(rejects.map((r) => r.targetKey).sort()).toEqual([...bad].sort())
    for (const r of rejects) {
      expect(r.code, r.targetKey).toBe('ERR_EXCEPTION')
      expect(r.message, r.targetKey).toMatch(/sent alone.*refused this row alone: data_import\.messages failed \(HTTP 500\): ERR_EXCEPTION: /)
    }
    await fx.sb.whenIdle()
    const log = await fx.sb.requests(app.id)
    if (c.settings.faults?.partialCommit500 !== undefined) {
      // The fault met message batches (not only users): their unwritten rows went again.
      expect(log.filter((r) => r.endpoint === 'messages' && r.fault === 'partialCommit500').length).toBeGreaterThan(0)
    }
    const facts = checkBadRowLog(log, good, bad)
    // No kill: no request carried a good row again after the one that created it.
    expect(facts.sentAfterCreated).toBe(0)
    // The end state agrees (not the proof: the sandbox's unique keys would hide a second write).
    const stored = await sandboxKeys(fx.sb, app.id, 'messages')
    expect([...stored.keys()].sort()).toEqual([...good].sort())

    // The bound (src/load/README.md): one request per 50 rows to send — the good rows once, and
    // again each good row a failed request left unwritten — plus one per bad row alone.
    const minimal = Math.ceil((good.size + bad.size + facts.unwrittenSends) / 50) + bad.size
    const spent = facts.requests - facts.rateLimited
    expect(spent, `${spent} requests, minimal ${minimal}`).toBeLessThanOrEqual(Math.ceil(minimal * c.maxRatio))
    const m = (await fx.store.entityStats(jobId)).find((s) => s.entity === 'messages')
    expect(m).toMatchObject({ done: good.size, created: good.size, rejected: bad.size, remaining: 0 })
    const report = await auditDeliveries({
      sb: fx.sb,
      appId: app.id,
      ledger: inspectLedger(fx.store),
      jobId,
      kills: 0,
      concurrency: 4,
      timeoutMs: 3000,
    })
    expect(report.violations, describeViolations(report)).toEqual([])
    console.log(
      `${c.name}: ${spent} import requests, minimal ${minimal}, read-backs ${out.counters.readBacks}, unwritten sends ${facts.unwrittenSends}`,
    )
  })
})

/**
 * Runs `load` with a mutant of the loader's bookkeeping: a BEFORE UPDATE trigger on the job's
 * items whose body (plpgsql, `old`/`new`) may rewrite the row; dropped afterwards.
 */
async function withMutant<T>(name: string, body: string, load: () => Promise<T>): Promise<T> {
  const db = inspectLedger(fx.store)
  await sql`create or replace function chatferry.${sql.raw(name)}() returns trigger language plpgsql as $$
    begin ${sql.raw(body)} return new; end $$`.execute(db)
  await sql`create trigger ${sql.raw(name)} before update on chatferry.items for each row execute function chatferry.${sql.raw(name)}()`.execute(db)
  try {
    return await load()
  } finally {
    await sql`drop trigger ${sql.raw(name)} on chatferry.items`.execute(db)
    await sql`drop function chatferry.${sql.raw(name)}()`.execute(db)
  }
}

const inList = (keys: Iterable<string>) => [...keys].map((k) => `'${k}'`).join(', ')

describe('mutants: the request log shows what the sandbox’s keys and the ledger hide', () => {
  it('rows a read-back found are sent again: still created once and stored once, but carried after their creation', async () => {
    const { app, good, bad } = await scenario('mut-resend', {}, true)
    // A row settled done while its batch still holds a bad row (the read-back's settlement) is planned again instead.
    const out = await withMutant(
      'mutant_resend_landed',
      `if new.job_id = 'mut-resend' and old.status = 'sent' and new.status = 'done' and exists (
         select 1 from chatferry.items b where b.job_id = old.job_id and b.batch_id = old.batch_id and b.target_key in (${inList(bad)})) then
         new.status := 'planned'; new.batch_id := null; new.done_reason := null; new.loaded_hash := old.loaded_hash; new.platform_id := old.platform_id;
       end if;`,
      () => load('mut-resend', app),
    )
    expect(out.status).toBe('rejected')
    await fx.sb.whenIdle()
    // What the old proof looked at passes: each good row stored once, created once.
    const stored = await sandboxKeys(fx.sb, app.id, 'messages')
    expect([...stored.keys()].sort()).toEqual([...good].sort())
    expect([...stored.values()].every((n) => n === 1)).toBe(true)
    const reading = readBadRowLog(await fx.sb.requests(app.id), good, bad)
    expect(reading.wrongCreations).toEqual([])
    // What the platform received does not: the good rows of every batch that held a bad row went again.
    expect(reading.sentAfterCreated).toBeGreaterThanOrEqual(4 * 49 - 1)
  })

  it('rows after a bad one are taken as written and never sent: the ledger says done, the log says never created', async () => {
    const { app, good, bad } = await scenario('mut-drop', { badRowCommit: 'stop-at-bad-row' }, true)
    // The rows a read-back did not find and planned again (the tail behind the prime suspect) are settled done instead.
    const out = await withMutant(
      'mutant_drop_tail',
      `if new.job_id = 'mut-drop' and old.status = 'sent' and new.status = 'planned' then
         new.status := 'done'; new.done_reason := 'created'; new.batch_id := old.batch_id;
       end if;`,
      () => load('mut-drop', app),
    )
    expect(out.status).toBe('rejected')
    // The ledger's word passes: nothing remaining, every good row done (and m61, behind m60, too).
    const m = (await fx.store.entityStats('mut-drop')).find((s) => s.entity === 'messages')
    expect(m).toMatchObject({ remaining: 0 })
    expect(m?.done).toBeGreaterThanOrEqual(good.size)
    await fx.sb.whenIdle()
    const reading = readBadRowLog(await fx.sb.requests(app.id), good, bad)
    // The log does not: the rows behind each bad row's batch position were never created.
    expect(reading.wrongCreations.length).toBeGreaterThan(0)
    expect(reading.wrongCreations.every((w) => w.endsWith('created 0 times'))).toBe(true)
  })
})
