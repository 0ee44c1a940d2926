/**
 * SIGKILLs while the loader isolates the bad rows of failed message requests (issue 24): the
 * `chatferry load` process is killed at random moments just after the platform answered a 500,
 * that is while it reads a batch back, records its isolation (rows found done, suspects into
 * batches of their own, the rest planned again), or sends a suspect alone; then run to the end.
 * Proven from the sandbox's request log (test/helpers/bad-row-log.ts), not from the ledger: every
 * good row created exactly once, rows carried again after they were written bounded by the kills'
 * in-flight batches, each bad row rejected on the platform's 500 to a request that held it alone;
 * the import requests within the bound. And a load whose only problems are rows quarantined at
 * planning ends with the documented "rejects" exit, 3.
 */
import { describe, expect, it } from 'vitest'

import type { AppSettingsPatch } from '../../../src/sandbox/app-settings.ts'
import { inspectLedger } from '../../../src/state/inspect-ledger.ts'
import { checkBadRowLog } from '../../helpers/bad-row-log.ts'
import { auditDeliveries, describeViolations, inFlightCapacity } from '../../helpers/delivery-audit.ts'
import { messages, runCli, users, writeConfig } from '../../helpers/ledger-fixtures.ts'
import { sandboxKeys, useLoaderFixture } from '../../helpers/loader-harness.ts'
import { testSecret } from '../../helpers/secrets.ts'

const fx = useLoaderFixture('cf_isokill')

/** `load.concurrency` of every loader here: the bounds depend on it. */
const CONCURRENCY = 4
const ENV = { CHATFERRY_LOAD_QUOTA_WINDOW_MS: '6000', CHATFERRY_LOAD_LEASE_SECONDS: '8', CHATFERRY_LOAD_CONCURRENCY: String(CONCURRENCY) }

/** Every 37th message is a row only the platform refuses (17 of 600), at every position of a batch over the run. */
const isBad = (i: number) => i % 37 === 5

describe('SIGKILLs during the isolation of bad rows', () => {
  it.each<[string, AppSettingsPatch]>([
    ['stop-at-bad-row', { badRowCommit: 'stop-at-bad-row' }],
    ['all-good-rows', {}],
  ])(
    '%s: killed four times just after a 500, then run to the end: every good row written once, only the bad rows rejected',
    async (name, settings) => {
      const jobId = `kill-${name}`
      const app = await fx.sb.createApp({
        id: jobId,
        apiKey: testSecret('apikey'),
        settings: { requestsPerMinute: 60, windowMs: 6000, ...settings, faults: { latencyMs: { min: 0, max: 60 } } },
      })
      const cfg = writeConfig({
        appId: app.id,
        apiKey: app.apiKey,
        baseUrl: app.baseUrl,
        stateUrl: fx.tdb.url,
        requestsPerMinute: 600,
        timeoutMs: 3000,
      })
      await fx.store.ensureJob(jobId, app.id)
      await fx.store.planItems(jobId, 'users', users(8))
      const msgs = messages(600, 8)
      for (const [i, m] of msgs.entries()) {
        const p = m.payload as Record<string, unknown> & { data: Record<string, unknown> }
        p.data.metadata = { legacy: { id: m.legacyId } }
        if (isBad(i)) {
          p.sender = 'ghost'
        }
      }
      await fx.store.planItems(jobId, 'messages', msgs)
      const bad = new Set(msgs.filter((_, i) => isBad(i)).map((m) => m.targetKey))
      const good = new Set(msgs.filter((_, i) => !isBad(i)).map((m) => m.targetKey))

      let kills = 0
      let seed = 7
      const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31
      const journal: string[] = []
      for (let i = 0; i < 4; i++) {
        const startedAt = Date.now()
        const run = runCli(['load', '--config', cfg, '--job', jobId], ENV)
        await run.waitFor('loader started', 20_000)
        const until = Date.now() + 20_000
        let failed = false
        while (!failed && Date.now() < until) {
          await new Promise((r) => setTimeout(r, 25))
          failed = (await fx.sb.requests(app.id)).some((r) => r.endpoint === 'messages' && r.status === 500 && r.receivedAtMs >= startedAt)
        }
        await new Promise((r) => setTimeout(r, random() * 700))
        run.child.kill('SIGKILL')
        const res = await run.done
        journal.push(`run ${i + 1}: a 500 seen ${failed}, ${res.signal ?? `exit ${res.code}`}`)
        if (res.signal === 'SIGKILL') {
          kills++
        }
      }
      expect(kills, journal.join('\n')).toBeGreaterThanOrEqual(3)
      const mid = (await fx.store.entityStats(jobId)).find((s) => s.entity === 'messages')
      expect(mid?.remaining, journal.join('\n')).toBeGreaterThan(0)

      const last = await runCli(['load', '--config', cfg, '--job', jobId], ENV).done
      expect(last.code, `${journal.join('\n')}\n${last.stderr.slice(-2000)}`).toBe(3)
      await fx.sb.whenIdle()
      const facts = checkBadRowLog(await fx.sb.requests(app.id), good, bad)
      // A row carried again after the platform wrote it: only a batch a kill caught in flight.
      expect(facts.existsAnswers, journal.join('\n')).toBeLessThanOrEqual(kills * inFlightCapacity(CONCURRENCY))
      const minimal = Math.ceil((msgs.length + facts.unwrittenSends) / 50) + bad.size
      const spent = facts.requests - facts.rateLimited
      // Each kill may cost the requests it had in flight again.
      expect(spent, `${spent} requests, minimal ${minimal}\n${journal.join('\n')}`).toBeLessThanOrEqual(
        Math.ceil(minimal * 1.15) + kills * CONCURRENCY,
      )

      const rejects = await fx.store.listRejects(jobId)
      expect(rejects.map((r) => r.targetKey).sort()).toEqual([...bad].sort())
      expect(new Set(rejects.map((r) => r.code))).toEqual(new Set(['ERR_EXCEPTION']))
      expect([...(await sandboxKeys(fx.sb, app.id, 'messages')).keys()].sort()).toEqual([...good].sort())
      const report = await auditDeliveries({
        sb: fx.sb,
        appId: app.id,
        ledger: inspectLedger(fx.store),
        jobId,
        kills,
        concurrency: CONCURRENCY,
        timeoutMs: 3000,
      })
      expect(report.violations, describeViolations(report)).toEqual([])
      console.log(
        `${name}: ${kills} kills, ${spent} import requests (minimal ${minimal}), ${facts.existsAnswers} "exists" answers\n${journal.join('\n')}`,
      )
    },
    180_000,
  )
})

it('a load whose only problems are rows quarantined at planning exits 3 (rejects), not 1', async () => {
  const app = await fx.sb.createApp({ id: 'quarantined', apiKey: testSecret('apikey'), settings: { requestsPerMinute: 1000, windowMs: 10_000 } })
  const cfg = writeConfig({ appId: app.id, apiKey: app.apiKey, baseUrl: app.baseUrl, stateUrl: fx.tdb.url, requestsPerMinute: 600, timeoutMs: 3000 })
  await fx.store.ensureJob('quarantined', app.id)
  await fx.store.planItems('quarantined', 'users', users(3))
  await fx.store.planItems('quarantined', 'messages', messages(20, 3))
  await fx.store.rejectItems('quarantined', 'messages', [{ legacyId: 'broken-1', code: 'MAPPING_INVALID', message: 'data.text: must not be empty' }])
  const res = await runCli(['load', '--config', cfg, '--job', 'quarantined'], ENV).done
  expect(res.code, res.stderr.slice(-2000)).toBe(3)
  expect(res.stderr).toMatch(/1 item\(s\) rejected/)
  expect((await sandboxKeys(fx.sb, app.id, 'messages')).size).toBe(20)
})
