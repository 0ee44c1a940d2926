/**
 * Issue 31: `chatferry dashboard` driven in headless Chromium (Debian's `chromium` through
 * playwright-core, as test/integration/report/report-html.test.ts does) during a real load against the
 * sandbox, as processes. With a Postgres ledger: the page's counts become `status --json`'s, the
 * throughput chart grows while the load runs, the rejects appear by code as `rejects --json` lists
 * them, the files lane (one file copied, one missing and failed) shows `status --json`'s file
 * counts, and a token, once set, is asked of every request. With the embedded store: a dashboard
 * opened before the run does not keep the run from taking the store, and its page then follows
 * the run (read through it) and, once the run has let the store go, reads it once more (a reading
 * through a busy run can be paced past the run's end). No request leaves for anywhere but the dashboard.
 */
import { existsSync, mkdirSync } from 'node:fs'
import { join, resolve } from 'node:path'

import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import type { StatusSnapshot } from '../../../src/cli/status-snapshot.ts'
import { genericSourceConfig, loadGenericSqlFixture } from '../../fixtures/generic-sql/fixture.ts'
import { useCliSuite } from '../../helpers/cli-suite.ts'
import { runCli } from '../../helpers/ledger-fixtures.ts'
import { CHART_BYTES, rehostIntoLocalStore, sourceWithLocalFiles } from '../../helpers/local-rehost.ts'
import { writeRunConfig } from '../../helpers/run-e2e.ts'

const CHROMIUM = '/usr/bin/chromium'
const ARTIFACTS = resolve(import.meta.dirname, '../../../test-artifacts')
const haveChromium = existsSync(CHROMIUM)
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-sync']
const ENTITIES = ['users', 'groups', 'members', 'messages'] as const
// 30 requests a minute of 2 items: the load (about 20 s) lasts long enough for the chart to draw
// several points (one per 0.5 s refresh, fewer on a loaded machine, where the dashboard paces its
// readings by what they took: at 60 a minute the load once ended before the fourth point).
const QUOTA = { requestsPerMinute: 30, itemsPerRequest: 2 }
// The embedded store's run need only outlast the page's first items done (0.5 s refresh).
const FAST_QUOTA = { requestsPerMinute: 120, itemsPerRequest: 2 }
const TOKEN = 'dashboard-token-0123456789abcdef'

const suite = useCliSuite()
let browser: Browser | undefined

beforeAll(async () => {
  if (haveChromium) {
    const { chromium } = await import('playwright-core')
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS })
  }
})
afterAll(async () => {
  await browser?.close()
})

/** Starts `dashboard` on a free port; resolves its URL from the line it prints when listening. */
function startDashboard(cfg: string, env: Record<string, string> = {}) {
  const dash = runCli(['dashboard', '--config', cfg, '--port', '0', '--refresh', '0.5'], env)
  let printed = ''
  dash.child.stderr?.on('data', (d: Buffer) => (printed += d.toString()))
  const url = dash.waitFor(/dashboard of job \S+ at http:\/\/127\.0\.0\.1:\d+\//, 60_000).then(() => {
    const m = /at (http:\/\/127\.0\.0\.1:\d+\/)/.exec(printed)
    if (!m?.[1]) {
      throw new Error(`no dashboard URL in: ${printed}`)
    }
    return { url: m[1], printed }
  })
  return { dash, url }
}

async function openPage(
  url: string,
  credentials?: { username: string; password: string },
): Promise<{ page: Page; requests: string[]; errors: string[] }> {
  const context = await browser!.newContext(credentials ? { httpCredentials: credentials } : {})
  const page = await context.newPage()
  const requests: string[] = []
  const errors: string[] = []
  page.on('request', (r) => void requests.push(r.url()))
  page.on('console', (m) => void (m.type() === 'error' && errors.push(m.text())))
  page.on('pageerror', (e) => void errors.push(e.message))
  await page.goto(url)
  return { page, requests, errors }
}

const num = async (page: Page, id: string) => Number(((await page.textContent(`#${id}`)) ?? '').replace(/,/g, ''))
const points = async (page: Page) => Number((await page.getAttribute('#rate-line', 'data-points')) ?? 0)

/** Polls `check` until it holds, failing after `ms`. */
async function until(check: () => Promise<boolean>, ms: number): Promise<void> {
  const deadline = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > deadline) {
      throw new Error(`not reached within ${ms} ms`)
    }
    await new Promise((r) => setTimeout(r, 200))
  }
}

async function statusJson(cfg: string): Promise<StatusSnapshot> {
  const r = await runCli(['status', '--config', cfg, '--json']).done
  expect(r.code, r.stderr.slice(-2000)).toBe(0)
  return JSON.parse(r.stdout) as StatusSnapshot
}

describe.skipIf(!haveChromium)(`dashboard in headless Chromium${haveChromium ? '' : ` (skipped: ${CHROMIUM} is not installed)`}`, () => {
  it('Postgres ledger: numbers of status --json, the chart grows during the load, rejects by code, files lane, token enforced', async () => {
    const source = await suite.freshDb('cf_dash_src')
    const state = await suite.freshDb('cf_dash_state')
    await loadGenericSqlFixture('postgres', source.url)
    const withFiles = await sourceWithLocalFiles(source.url)
    const app = await suite.tsb.app({ retentionDays: 100_000, requestsPerMinute: QUOTA.requestsPerMinute })
    const cfg = writeRunConfig({
      appId: app.id,
      apiKey: app.apiKey,
      baseUrl: app.baseUrl,
      stateUrl: state.url,
      ...QUOTA,
      source: withFiles,
      policies: { retention: { oldMessages: 'send' } },
    })
    rehostIntoLocalStore(cfg)

    const run = runCli(['run', '--config', cfg])
    await run.waitFor('loader started', 60_000)
    const { dash, url: listening } = startDashboard(cfg, { CHATFERRY_DASHBOARD_TOKEN: TOKEN })
    try {
      const { url, printed } = await listening
      expect(printed).toMatch(/\(token required\)/)

      // The token is asked of every request: the page, its script, the view.
      for (const path of ['', 'app.js', 'api/view']) {
        expect((await fetch(url + path)).status, path).toBe(401)
        expect((await fetch(url + path, { headers: { authorization: 'Bearer wrong-token-0123456789abc' } })).status, path).toBe(401)
        expect((await fetch(url + path, { headers: { authorization: `Bearer ${TOKEN}` } })).status, path).toBe(200)
      }
      const { page, requests, errors } = await openPage(url, { username: 'ops', password: TOKEN })
      await page.waitForSelector('#rate-line', { timeout: 30_000 })
      // During the load: items get done, the chart gets points, and the page shows the quota line.
      const firstPoints = await points(page)
      const firstDone = await num(page, 'total-done')
      await until(async () => (await points(page)) >= firstPoints + 4 && (await num(page, 'total-done')) > firstDone, 60_000)
      expect(await num(page, 'total-remaining')).toBeGreaterThan(0)
      expect(await page.getAttribute('#quota-line', 'y1')).not.toBeNull()
      expect(await page.textContent('#quota')).toBe(`${QUOTA.requestsPerMinute} requests/min × 2 items`)

      const ran = await run.done
      // Exit 3: finished, some items rejected (the fixture's bad rows).
      expect(ran.code, ran.stderr.slice(-2000)).toBe(3)
      const status = await statusJson(cfg)
      // The page catches up with the ledger: every entity's counts are status --json's.
      const want: Record<string, number> = {}
      for (const e of status.entities) {
        Object.assign(want, {
          [`${e.entity}-planned`]: e.total,
          [`${e.entity}-done`]: e.done,
          [`${e.entity}-rejected`]: e.rejected,
          [`${e.entity}-remaining`]: e.remaining,
          [`${e.entity}-skipped`]: e.skipped,
        })
      }
      // The files lane: one file copied, one failed (missing), the message holding it waits.
      expect(status.files).toMatchObject({ copied: 1, failed: 1, planned: 0, copiedBytes: CHART_BYTES })
      Object.assign(want, {
        'files-planned': status.files?.planned,
        'files-copied': status.files?.copied,
        'files-failed': status.files?.failed,
        'files-skipped': status.files?.skipped,
        'files-waiting': status.files?.waitingMessages,
      })
      await until(async () => {
        for (const [id, v] of Object.entries(want)) {
          if ((await num(page, id)) !== v) {
            return false
          }
        }
        return true
      }, 30_000)
      expect(status.entities.map((e) => e.entity).sort()).toEqual([...ENTITIES].sort())
      expect(status.entities.find((e) => e.entity === 'messages')?.done).toBeGreaterThan(0)
      // The rejects appear by code, counted as `rejects --json` lists them, with a sample.
      const listed = JSON.parse((await runCli(['rejects', '--config', cfg, '--json']).done).stdout) as { code: string | null; legacyId: string }[]
      expect(listed.length).toBeGreaterThan(0)
      const byCode = new Map<string, number>()
      for (const r of listed) {
        byCode.set(r.code ?? 'unknown', (byCode.get(r.code ?? 'unknown') ?? 0) + 1)
      }
      for (const [code, count] of byCode) {
        const cells = await page.$$eval(`tr[id="reject-${code}"] td`, (tds) => tds.map((td) => td.textContent ?? ''))
        expect(cells[1], code).toBe(String(count))
        expect(listed.some((r) => (r.code ?? 'unknown') === code && cells[2]?.includes(r.legacyId))).toBe(true)
      }
      // The run is listed, finished.
      const runId = status.runs[0]?.id
      expect(await page.textContent(`#run-${runId} td:nth-child(3)`)).toBe(status.runs[0]?.status)
      // Nothing left the page but for the dashboard; no script error; no secret on the page.
      expect(requests.every((r) => r.startsWith(url))).toBe(true)
      expect(errors).toEqual([])
      const html = await page.content()
      expect(html).not.toContain(app.apiKey)
      expect(html).not.toContain(TOKEN)
      mkdirSync(ARTIFACTS, { recursive: true })
      await page.screenshot({ path: join(ARTIFACTS, 'dashboard.png'), fullPage: true })
      await page.context().close()
    } finally {
      run.child.kill('SIGTERM')
      dash.child.kill('SIGTERM')
    }
    const stopped = await dash.done
    expect(stopped.code, stopped.stderr.slice(-2000)).toBe(0)
    expect(stopped.stdout + stopped.stderr).not.toContain(TOKEN)
  }, 240_000)

  it('embedded store: a dashboard open before the run does not keep the run from its store, and follows it through the run', async () => {
    const source = await suite.freshDb('cf_dash_emb')
    await loadGenericSqlFixture('postgres', source.url)
    const app = await suite.tsb.app({ retentionDays: 100_000, requestsPerMinute: FAST_QUOTA.requestsPerMinute })
    const cfg = writeRunConfig({
      appId: app.id,
      apiKey: app.apiKey,
      baseUrl: app.baseUrl,
      ...FAST_QUOTA,
      source: genericSourceConfig(source.url) as unknown as Record<string, unknown>,
      policies: { retention: { oldMessages: 'send' } },
    })
    const { dash, url: listening } = startDashboard(cfg)
    let run: ReturnType<typeof runCli> | undefined
    try {
      const { url } = await listening
      const { page, errors } = await openPage(url)
      await until(async () => (await page.textContent('#job')) !== '…', 30_000)
      expect(await num(page, 'total-done')).toBe(0)

      run = runCli(['run', '--config', cfg])
      await run.waitFor('loader started', 60_000)
      // Read through the run while it holds the store (on a loaded machine a reading through the
      // busy run can be slow enough that the next comes after the run's end: the page then says so).
      const vias = new Set<string>()
      const via = async () => void vias.add((await page.textContent('#via')) ?? '')
      await until(async () => {
        await via()
        const done = await num(page, 'total-done')
        await via() // the page may have refreshed in between
        return done > 0
      }, 60_000)
      expect(
        [...vias].some((v) => /through pid \d+ \(chatferry run/.test(v)),
        [...vias].join(' | '),
      ).toBe(true)
      const ran = await run.done
      const exitedAt = Date.now()
      // Exit 3: finished, some items rejected (the fixture's bad rows).
      expect(ran.code, ran.stderr.slice(-2000)).toBe(3)
      // Once the run has let the store go, the dashboard reads it once more, however long ago its
      // last reading through the run was: the page shows where the run left the job.
      const done = (await statusJson(cfg)).entities.reduce((n, e) => n + e.done, 0)
      const view = async () => (await (await fetch(new URL('api/view', url))).json()) as { at: string; via: string }
      await until(async () => {
        const v = await view()
        // Stamped after its reading, which opens the store the run had let go before it exited.
        return Date.parse(v.at) >= exitedAt && /no process holds/.test(v.via)
      }, 30_000)
      await until(async () => (await num(page, 'total-done')) === done, 10_000)
      expect(errors).toEqual([])
      await page.context().close()
    } finally {
      run?.child.kill('SIGTERM')
      dash.child.kill('SIGTERM')
    }
    expect((await dash.done).code).toBe(0)
  }, 240_000)

  it('an address beyond loopback without a token is refused before anything listens (exit 2)', async () => {
    const cfg = writeRunConfig({
      appId: 'dash-exposed',
      apiKey: 'dash-exposed-key-0123456789',
      baseUrl: 'http://127.0.0.1:9/x',
      source: genericSourceConfig('postgres://127.0.0.1:9/none') as unknown as Record<string, unknown>,
    })
    const r = await runCli(['dashboard', '--config', cfg, '--host', '0.0.0.0', '--port', '0']).done
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/CHATFERRY_DASHBOARD_TOKEN/)
  }, 60_000)
})
