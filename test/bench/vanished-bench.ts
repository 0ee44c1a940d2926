/**
 * Vanished-row benchmark: the ledger side of `run --delta --detect-deletes` — the key-set
 * comparison of `store.updatePlan.recordVanished` (the source's legacy ids into a temporary table,
 * then the job's done items walked through `items_done_legacy_idx` and probed against it) — on a
 * Postgres ledger holding N done messages, with 100 of them gone from the source. Prints the time
 * of each phase and the ids per second per size (the cost grows with the ledger's messages: it is
 * why messages are compared only on request). Then the key reconciliation's side (issue 24:
 * `store.updatePlan.compareKeys` for the source's keys the ledger never planned, the same temporary
 * table anti-joined with the job's items), alone and together with the vanished comparison on one
 * read of the keys, with 100 source keys the ledger does not hold.
 *
 *   node test/bench/vanished-bench.ts [--sizes 100000,1000000]
 *   npm run bench -- vanished
 *
 * The ledger database (`cf_bench_vanished`) is dropped and rebuilt on every run. The Postgres
 * server is `TEST_DATABASE_URL` or postgres://postgres@127.0.0.1:5432/postgres.
 */
import { sql } from 'kysely'

import { inspectLedger } from '../../src/state/inspect-ledger.ts'
import { openLedger } from '../../src/state/store.ts'
import { benchDbUrl, withBenchAdmin } from './mattermost-bench-db.ts'

const args = process.argv.slice(2)
const i = args.indexOf('--sizes')
const SIZES = (i === -1 ? '100000,1000000' : (args[i + 1] ?? '')).split(',').map(Number)
const GONE = 100
const DB = 'cf_bench_vanished'

async function* keys(n: number, page: number): AsyncIterable<readonly string[]> {
  for (let start = 0; start < n; start += page) {
    const ids: string[] = []
    for (let k = start; k < Math.min(n, start + page); k++) {
      // Every GONE-th of the first GONE × (n / GONE) ids is gone from the source.
      if (k % Math.floor(n / GONE) !== 7) {
        ids.push(`p${k}`)
      }
    }
    yield ids
  }
}

/** The source's keys of {@link keys} plus {@link GONE} the ledger never planned (`n<k>`). */
async function* keysWithNew(n: number, page: number): AsyncIterable<readonly string[]> {
  yield* keys(n, page)
  yield Array.from({ length: GONE }, (_, k) => `n${k}`)
}

async function once(n: number): Promise<void> {
  await withBenchAdmin(async (c) => {
    await c.query(`drop database if exists ${DB} with (force)`)
    await c.query(`create database ${DB}`)
  })
  const store = await openLedger({ url: benchDbUrl(DB) })
  try {
    await store.ensureJob('bench', 'bench')
    const db = inspectLedger(store)
    let t = performance.now()
    await sql`insert into chatferry.items (job_id, entity, legacy_id, target_key, payload, payload_hash, loaded_hash, status, done_reason)
      select 'bench', 'messages', 'p' || g, 'p' || g, '{"sender":"u1"}', 'h', 'h', 'done', 'created' from generate_series(0, ${n - 1}) g`.execute(db)
    await sql`analyze chatferry.items`.execute(db)
    const fill = performance.now() - t
    t = performance.now()
    const out = await store.updatePlan.recordVanished('bench', 'messages', keys(n, 10_000), (items) =>
      items.map((it) => ({
        kind: 'message.delete' as const,
        legacyId: it.legacyId,
        targetKey: it.targetKey,
        body: {},
        policy: 'report' as const,
        reason: 'vanished from the source',
      })),
    )
    const scan = performance.now() - t
    if (out.vanished !== GONE) {
      throw new Error(`expected ${GONE} vanished items, found ${out.vanished}`)
    }
    process.stdout.write(
      `${n.toLocaleString('en')} done messages: ledger filled in ${(fill / 1000).toFixed(1)} s; comparison ${(scan / 1000).toFixed(2)} s ` +
        `(${Math.round(n / (scan / 1000)).toLocaleString('en')} ids/s), ${out.vanished} vanished, ${out.reported} recorded\n`,
    )
    t = performance.now()
    const alone = await store.updatePlan.compareKeys('bench', 'messages', keysWithNew(n, 10_000), { unplanned: true })
    const reconcile = performance.now() - t
    t = performance.now()
    const both = await store.updatePlan.compareKeys('bench', 'messages', keysWithNew(n, 10_000), {
      unplanned: true,
      vanished: { decide: () => [] },
    })
    const together = performance.now() - t
    if (alone.unplanned.length !== GONE || both.unplanned.length !== GONE) {
      throw new Error(`expected ${GONE} keys never planned, found ${alone.unplanned.length} and ${both.unplanned.length}`)
    }
    process.stdout.write(
      `${n.toLocaleString('en')} done messages: key reconciliation ${(reconcile / 1000).toFixed(2)} s (${alone.unplanned.length} never planned); ` +
        `with the vanished comparison on the same read ${(together / 1000).toFixed(2)} s\n`,
    )
  } finally {
    await store.close()
  }
}

for (const n of SIZES) {
  await once(n)
}
await withBenchAdmin((c) => c.query(`drop database if exists ${DB} with (force)`))
