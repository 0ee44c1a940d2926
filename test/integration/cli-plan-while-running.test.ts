/**
 * Issue 14, "watchable": `plan` while a `run` holds the embedded ledger, as processes. The run has
 * planned every item and is loading against an app whose every import request hangs (so no item's
 * fate changes meanwhile); `plan` reads the ledger through the run (its socket), keeps its thread
 * parents in a scratch file, and has the run append its report to the ledger. The report must be
 * the one `plan` writes when it holds the store itself: the same counts per entity, every item the
 * run planned found in the ledger (pending, none new), and the next plan's diff names it.
 */
import { dirname, join } from 'node:path'

import { expect, it } from 'vitest'

import { connectReadSocket, readSocketPath } from '../../src/cli/ledger-read-socket.ts'
import type { PlanReport } from '../../src/report/schema.ts'
import { genericSourceConfig, loadGenericSqlFixture } from '../fixtures/generic-sql/fixture.ts'
import { useCliSuite } from '../helpers/cli-suite.ts'
import { runCli } from '../helpers/ledger-fixtures.ts'
import { writeRunConfig } from '../helpers/run-e2e.ts'

const suite = useCliSuite()

/** What must not depend on how the plan reached the ledger. */
function counts(report: PlanReport) {
  return Object.fromEntries(
    Object.entries(report.entities).map(([entity, e]) => [
      entity,
      {
        sourceRows: e.sourceRows,
        records: e.records,
        problems: e.problems,
        sourceCount: e.sourceCount,
        items: e.items,
        fates: e.fates,
        toCreate: e.toCreate,
        skipped: e.skipped,
        rejected: e.rejected,
        outcomes: e.outcomes,
        referential: e.referential,
        changedFields: e.changedFields,
        samples: e.samples,
      },
    ]),
  )
}

it('plan during a run on the embedded store: read through the run, the same report as with the store to itself, kept in the ledger', async () => {
  const source = await suite.freshDb('cf_planwatch_src')
  await loadGenericSqlFixture('postgres', source.url)
  // Every import request hangs past the client's timeout: the run stays in its load, nothing settles.
  const app = await suite.tsb.app({ retentionDays: 100_000, requestsPerMinute: 6000, faults: { latencyMs: { min: 60_000, max: 60_000 } } })
  const cfg = writeRunConfig({
    appId: app.id,
    apiKey: app.apiKey,
    baseUrl: app.baseUrl,
    // Pages of 2 rows: replies find their thread parents on earlier pages (the plan's scratch file).
    source: genericSourceConfig(source.url, 2) as unknown as Record<string, unknown>,
    policies: { retention: { oldMessages: 'send' } },
  })
  const dir = join(dirname(cfg), '.chatferry')
  const out = join(dirname(cfg), 'reports')

  const run = runCli(['run', '--config', cfg])
  let first: PlanReport
  try {
    await run.waitFor('loader started', 60_000)

    const during = await runCli(['plan', '--config', cfg, '--json', '--out', join(out, 'during')]).done
    expect(during.code, during.stderr.slice(-3000)).toBe(0)
    expect(during.stderr).toMatch(/the embedded store is in use: reading it through pid \d+ \(chatferry run, since \d{4}-/)
    first = JSON.parse(during.stdout) as PlanReport
    // The ledger was read: every item the run planned is pending, none is new.
    for (const [entity, e] of Object.entries(first.entities)) {
      expect(e.fates.new, entity).toBe(0)
      expect(e.fates.pending + e.fates.pendingChanged, entity).toBe(e.toCreate)
      expect(e.toCreate, entity).toBeGreaterThan(0)
    }
    expect(first.entities.messages.rejected.total).toBeGreaterThan(0)

    // The socket keeps plan reports only.
    const remote = await connectReadSocket(readSocketPath(dir))
    await expect(remote.savePlanReport({ kind: 'plan', jobId: app.id })).rejects.toThrow(/not a plan report/)
    remote.close()
  } finally {
    // Twice: the first signal would wait for the hanging requests.
    run.child.kill('SIGTERM')
    await run.waitFor('SIGTERM: stopping')
    run.child.kill('SIGTERM')
  }
  const stopped = await run.done
  expect(stopped.code, stopped.stderr.slice(-2000)).toBe(1)

  // The store to itself now: the same counts, and the diff is against the plan kept through the run.
  const after = await runCli(['plan', '--config', cfg, '--json', '--out', join(out, 'after')]).done
  expect(after.code, after.stderr.slice(-3000)).toBe(0)
  expect(after.stderr).not.toMatch(/reading it through/)
  const second = JSON.parse(after.stdout) as PlanReport
  expect(counts(first)).toEqual(counts(second))
  expect(second.diff?.previousRunId).toBe(first.runId)
}, 180_000)
