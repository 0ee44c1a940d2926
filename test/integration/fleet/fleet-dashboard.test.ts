/**
 * Issue 31: `chatferry fleet dashboard` driven in headless Chromium (Debian's `chromium` through
 * playwright-core) against a real fleet ledger while `fleet run` migrates the tenants into the
 * sandbox, as processes. The dashboard runs without CHATFERRY_FLEET_KEY (ledger only); its page
 * follows the run live (items done grow without a reload, the chart gains points), and once the
 * run has ended every tenant's row — state, done/remaining per entity, rejects, last error —
 * shows what `fleet status --json` prints, the unreachable tenant failed with its error. The token
 * is asked of every request once set; no key reaches the page; nothing is fetched from elsewhere.
 */
import { existsSync } from 'node:fs'

import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import type { TenantStatus } from '../../../src/fleet/fleet-status.ts'
import type { TenantHistory } from '../../helpers/fleet-legacy.ts'
import { createFleetWorld, type FleetWorld } from '../../helpers/fleet-world.ts'
import { runCli } from '../../helpers/ledger-fixtures.ts'

const CHROMIUM = '/usr/bin/chromium'
const haveChromium = existsSync(CHROMIUM)
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-sync']
const TOKEN = 'fleet-dashboard-token-0123456789'
// 2 import requests per 2 s per app and 600 messages (12 requests) a tenant: the load lasts long enough to watch.
const PER_WINDOW = 2
const WINDOW_MS = 2000
const HISTORY: TenantHistory = { users: 6, groups: 2, membersPerGroup: 4, messages: 600 }
const GOOD = ['acme', 'globex']

let world: FleetWorld | undefined
let browser: Browser | undefined

beforeAll(async () => {
  if (!haveChromium) {
    return
  }
  world = await createFleetWorld({
    tenants: [
      ...GOOD.map((id) => ({ id, history: HISTORY })),
      {
        id: 'umbrella',
        source: { connector: 'generic-sql', url: 'postgres://reader@127.0.0.1:9/legacy', entities: { users: { query: 'SELECT 1 AS id' } } },
      },
    ],
    perWindow: PER_WINDOW,
    windowMs: WINDOW_MS,
  })
  const { chromium } = await import('playwright-core')
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS })
}, 120_000)

afterAll(async () => {
  await browser?.close()
  await world?.close()
})

const num = (text: string | null) => Number((text ?? '').replace(/,/g, ''))
const cell = (page: Page, tenant: string, field: string) => page.textContent(`tr[id="tenant-${tenant}"] td[data-field="${field}"]`)
const points = async (page: Page) => Number((await page.getAttribute('#rate-line', 'data-points')) ?? 0)

async function until(check: () => Promise<boolean>, ms: number): Promise<void> {
  const deadline = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > deadline) {
      throw new Error(`not reached within ${ms} ms`)
    }
    await new Promise((r) => setTimeout(r, 200))
  }
}

/** What the page shows for a tenant, in the terms of `fleet status --json`. */
async function rowOf(page: Page, t: TenantStatus) {
  const out: Record<string, string | number | null> = {
    state: await cell(page, t.tenantId, 'state'),
    done: num(await cell(page, t.tenantId, 'done')),
    remaining: num(await cell(page, t.tenantId, 'remaining')),
    rejected: num(await cell(page, t.tenantId, 'rejected')),
    lastError: (await cell(page, t.tenantId, 'last-error')) || null,
  }
  for (const e of t.entities) {
    out[`${e.entity}-done`] = num(await cell(page, t.tenantId, `${e.entity}-done`))
    out[`${e.entity}-remaining`] = num(await cell(page, t.tenantId, `${e.entity}-remaining`))
  }
  return out
}

function expected(t: TenantStatus) {
  const out: Record<string, string | number | null> = {
    state: t.state,
    done: t.done,
    remaining: t.remaining,
    rejected: t.rejected,
    lastError: t.lastError,
  }
  for (const e of t.entities) {
    out[`${e.entity}-done`] = e.done
    out[`${e.entity}-remaining`] = e.remaining
  }
  return out
}

describe.skipIf(!haveChromium)(`fleet dashboard in headless Chromium${haveChromium ? '' : ` (skipped: ${CHROMIUM} is not installed)`}`, () => {
  it("follows fleet run live and ends on fleet status --json's numbers, without the fleet key", async () => {
    const w = world!
    const fleetKey = w.env.CHATFERRY_FLEET_KEY!
    // No fleet key in the dashboard's environment: it reads the ledger only.
    const dash = runCli(['fleet', 'dashboard', '--fleet', w.fleetFile, '--port', '0', '--refresh', '0.5'], {
      CHATFERRY_FLEET_KEY: '',
      CHATFERRY_DASHBOARD_TOKEN: TOKEN,
    })
    let printed = ''
    dash.child.stderr?.on('data', (d: Buffer) => (printed += d.toString()))
    let run: ReturnType<typeof runCli> | undefined
    try {
      await dash.waitFor(/dashboard of fleet tfleet at http:\/\/127\.0\.0\.1:\d+\/ \(token required\)/, 60_000)
      const url = /at (http:\/\/127\.0\.0\.1:\d+\/)/.exec(printed)![1]!
      for (const path of ['', 'app.js', 'api/view']) {
        expect((await fetch(url + path)).status, path).toBe(401)
        expect((await fetch(url + path, { headers: { authorization: `Bearer ${TOKEN}` } })).status, path).toBe(200)
      }

      const context = await browser!.newContext({ httpCredentials: { username: 'ops', password: TOKEN } })
      const page = await context.newPage()
      const requests: string[] = []
      const errors: string[] = []
      page.on('request', (r) => void requests.push(r.url()))
      page.on('pageerror', (e) => void errors.push(e.message))
      page.on('console', (m) => void (m.type() === 'error' && errors.push(m.text())))
      await page.goto(url)
      // Before the run: every tenant listed, none started.
      await until(async () => (await page.$$('#tenants tbody tr')).length === 3, 30_000)
      for (const id of GOOD) {
        expect(await cell(page, id, 'state')).toBe('not started')
      }

      run = runCli(['fleet', 'run', '--fleet', w.fleetFile, '--json'], w.env)
      // During the run: the page redraws on its own — a tenant loading, items done growing, the chart gaining points.
      await until(async () => (await cell(page, 'acme', 'state')) === 'loading', 120_000)
      const firstDone = num(await page.textContent('#total-done'))
      const firstPoints = await points(page)
      await until(async () => num(await page.textContent('#total-done')) > firstDone && (await points(page)) >= firstPoints + 3, 120_000)
      expect(num(await page.textContent('#total-remaining'))).toBeGreaterThan(0)

      const ran = await run.done
      expect(ran.code, ran.stderr.slice(-3000)).toBe(1)
      const status = await runCli(['fleet', 'status', '--fleet', w.fleetFile, '--json'], { CHATFERRY_FLEET_KEY: '' }).done
      expect(status.code, status.stderr).toBe(0)
      const tenants = (JSON.parse(status.stdout) as { tenants: TenantStatus[] }).tenants
      expect(tenants.map((t) => [t.tenantId, t.state])).toEqual([...GOOD.map((id) => [id, 'done']), ['umbrella', 'failed']])
      // The page catches up with the ledger: every tenant's row is fleet status --json's line.
      await until(async () => {
        for (const t of tenants) {
          if (JSON.stringify(await rowOf(page, t)) !== JSON.stringify(expected(t))) {
            return false
          }
        }
        return true
      }, 30_000)
      for (const t of tenants) {
        expect(await rowOf(page, t)).toEqual(expected(t))
      }
      expect(tenants.find((t) => t.tenantId === 'umbrella')?.lastError).toBeTruthy()
      expect(num(await page.textContent('#total-done'))).toBe(tenants.reduce((a, t) => a + t.done, 0))
      expect(await page.textContent('#states')).toBe('2 done, 1 failed')

      // Nothing fetched from elsewhere, no script error, no key on the page.
      expect(requests.every((r) => r.startsWith(url))).toBe(true)
      expect(errors).toEqual([])
      const html = await page.content()
      for (const secret of [fleetKey, TOKEN, ...[...w.apps.values()].map((a) => a.apiKey)]) {
        expect(html).not.toContain(secret)
      }
      await context.close()
    } finally {
      run?.child.kill('SIGTERM')
      dash.child.kill('SIGTERM')
    }
    const stopped = await dash.done
    expect(stopped.code, stopped.stderr.slice(-2000)).toBe(0)
    expect(stopped.stdout + stopped.stderr).not.toContain(TOKEN)
  }, 400_000)
})
