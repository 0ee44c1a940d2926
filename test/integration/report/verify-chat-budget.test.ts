/**
 * One chat budget for every process (issue 25 item 3): two `chatferry verify` processes at once on
 * one job draw their chat reads from the app's shared budget row (`<appId>#chat`, src/load/chat-budget.ts),
 * so together they never send the platform more chat calls in any window than its chat quota.
 * Proven from the wire, not from chatferry's own counts: both processes reach the sandbox through
 * a recording proxy, which keeps every chat read's arrival time and status; the sandbox's chat
 * limiter answers 429 to a call over the quota. Each process alone paces at the full quota, so
 * two processes pacing apart (the in-process pacer this replaced) would send twice the quota.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { createServer, request, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

import { afterAll, expect, it } from 'vitest'
import { parse, stringify } from 'yaml'

import { genericSourceConfig } from '../../fixtures/generic-sql/fixture.ts'
import { useCliSuite } from '../../helpers/cli-suite.ts'
import { fixtureSource } from '../../helpers/generic-job.ts'
import { runCli } from '../../helpers/ledger-fixtures.ts'
import { maxInWindow } from '../../helpers/loader-harness.ts'
import { writeRunConfig } from '../../helpers/run-e2e.ts'

const suite = useCliSuite()
let proxy: Server | undefined

afterAll(async () => {
  await new Promise<void>((resolve) => (proxy ? proxy.close(() => resolve()) : resolve()))
})

/** Forwards every request to `target`, recording each GET (the chat reads) with its arrival and status. */
async function recordingProxy(target: string): Promise<{ url: string; reads: { at: number; status: number; path: string }[] }> {
  const reads: { at: number; status: number; path: string }[] = []
  const to = new URL(target)
  proxy = createServer((req, res) => {
    const at = Date.now()
    const out = request(
      {
        host: to.hostname,
        port: to.port,
        path: req.url,
        method: req.method,
        headers: { ...req.headers, host: to.host },
      },
      (answer) => {
        if (req.method === 'GET') {
          reads.push({ at, status: answer.statusCode ?? 0, path: req.url ?? '' })
        }
        res.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(res)
      },
    )
    out.on('error', () => res.destroy())
    req.pipe(out)
  })
  await new Promise<void>((resolve) => proxy!.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}${to.pathname}`, reads }
}

it('two verify processes at once never exceed the app chat quota together', async () => {
  const windowMs = 2000
  const perWindow = 3
  const { dir, url: sourceUrl } = await fixtureSource('cf-verify-budget')
  const state = await suite.freshDb('cf_verify_budget')
  const app = await suite.tsb.app({ retentionDays: 100_000, requestsPerMinute: 6000, windowMs, chatRequestsPerMinute: perWindow })
  const cfg = writeRunConfig({
    appId: app.id,
    apiKey: app.apiKey,
    baseUrl: app.baseUrl,
    stateUrl: state.url,
    source: genericSourceConfig(sourceUrl) as unknown as Record<string, unknown>,
    policies: { retention: { oldMessages: 'send' } },
    load: { quotaWindowMs: windowMs },
    dir,
  })
  expect((await runCli(['run', '--config', cfg]).done).code).toBe(3)

  // The run's own chat calls (its pre-flight) out of the sandbox's window first.
  await new Promise((r) => setTimeout(r, windowMs + 500))
  // The verifies reach the sandbox through the proxy; each alone paces at the whole chat quota.
  const { url, reads } = await recordingProxy(app.baseUrl)
  const viaProxy = cfg.replace(/chatferry\.yaml$/, 'chatferry-proxied.yaml')
  const doc = parse(readFileSync(cfg, 'utf8')) as { target: { baseUrl: string } }
  doc.target.baseUrl = url
  writeFileSync(viaProxy, stringify(doc))
  const rpm = String((perWindow * 60_000) / windowMs)
  const [a, b] = await Promise.all([
    runCli(['verify', '--config', viaProxy, '--chat-rpm', rpm, '--no-source']).done,
    runCli(['verify', '--config', viaProxy, '--chat-rpm', rpm, '--no-source']).done,
  ])
  expect(
    [a.code, b.code].every((c) => c === 0 || c === 3),
    `${a.stderr.slice(-1000)}\n${b.stderr.slice(-1000)}`,
  ).toBe(true)
  // Enough reads that two processes pacing apart would have overrun the quota many times.
  expect(reads.length).toBeGreaterThan(4 * perWindow)
  const t0 = reads[0]?.at ?? 0
  const timeline = reads.map((r) => `${r.at - t0} ${r.status} ${r.path.split('?')[0]}`).join('\n')
  expect(
    reads.filter((r) => r.status === 429),
    timeline,
  ).toEqual([])
  expect(
    maxInWindow(
      reads.map((r) => r.at),
      windowMs,
    ),
  ).toBeLessThanOrEqual(perWindow)
}, 240_000)
