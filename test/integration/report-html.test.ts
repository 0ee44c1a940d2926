/**
 * The HTML reports open in headless Chromium (Debian's `chromium`, driven by playwright-core; no
 * browser is downloaded): they render, every chart has drawn content, the console stays free of
 * errors, no request leaves the page; a screenshot of each is kept under `test-artifacts/`.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { stringify } from 'yaml'

import { renderVerifyHtml } from '../../src/report/html.ts'
import { PlanReport, VerifyReport } from '../../src/report/schema.ts'
import { loadMattermostFixture } from '../fixtures/mattermost/load.ts'
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts'
import { runCli } from '../helpers/ledger-fixtures.ts'

const CHROMIUM = '/usr/bin/chromium'
const ARTIFACTS = resolve(import.meta.dirname, '../../test-artifacts')
const haveChromium = existsSync(CHROMIUM)
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]

let source: TestDatabase | undefined
let state: TestDatabase | undefined
let planHtml = ''

beforeAll(async () => {
  if (!haveChromium) {
    return
  }
  source = await createTestDatabase('cf_html_src')
  state = await createTestDatabase('cf_html_state')
  await loadMattermostFixture('postgres', source.url)
  const dir = mkdtempSync(join(tmpdir(), 'chatferry-html-'))
  const cfg = join(dir, 'chatferry.yaml')
  writeFileSync(
    cfg,
    stringify({
      target: { appId: 'html-test', region: 'us', apiKey: 'html-test-key-0123456789', baseUrl: 'http://127.0.0.1:9/apps/html-test/v3' },
      state: { url: state.url },
      source: { connector: 'mattermost', url: source.url },
      // 400 days: some fixture months fall inside the window once it is old enough; either way both colours exist.
      policies: { retention: { oldMessages: 'send' } },
    }),
  )
  const r = await runCli(['plan', '--config', cfg, '--out', dir], { CHATFERRY_LOG_LEVEL: 'error' }).done
  expect(r.code, r.stderr).toBe(0)
  planHtml = join(dir, 'plan-report.html')
  PlanReport.parse(JSON.parse(readFileSync(join(dir, 'plan-report.json'), 'utf8')))
})

afterAll(async () => {
  await source?.drop()
  await state?.drop()
})

function verifySample(): VerifyReport {
  const entity = (ledgerDone: number, platform: number, missing: number) => ({
    ledgerDone,
    ledgerOpen: 1,
    platform,
    missing,
    unexpected: 0,
    duplicates: 0,
    source: { rows: ledgerDone + 1, ledgerRecords: ledgerDone + 1 },
  })
  return VerifyReport.parse({
    schemaVersion: 1,
    kind: 'verify',
    runId: 'verify-20261121T120000Z-abcdef12',
    jobId: 'html-test',
    appId: 'html-test',
    region: 'us',
    chatferryVersion: '0.1.0',
    configHash: 'f'.repeat(64),
    sourceSnapshotAt: '2026-11-21T12:00:00.000Z',
    generatedAt: '2026-11-21T12:00:05.000Z',
    durationMs: 5000,
    entities: { users: entity(8, 7, 1), groups: entity(5, 5, 0), members: entity(13, 12, 1), messages: entity(18, 17, 1) },
    messages: {
      conversations: 7,
      conversationsMismatched: 1,
      sampleRequested: 100,
      sampleCompared: 17,
      fields: ['sender', 'receiver', 'sentAt', 'text'],
      idsComparable: true,
    },
    chat: { requests: 30, requestsPerMinute: 1000, rateLimited: 0 },
    mismatches: [
      {
        entity: 'users',
        kind: 'missing',
        targetKey: 'u10badprops',
        legacyId: 'u10badprops',
        field: null,
        expected: 'u10badprops',
        actual: null,
        explained: false,
        note: 'done in the ledger, absent on the platform',
      },
      {
        entity: 'messages',
        kind: 'field',
        targetKey: 'p03tie',
        legacyId: 'p03tie',
        field: 'text',
        expected: 'Same millisecond',
        actual: '<script>alert(1)</script>',
        explained: false,
        note: 'differs from what the ledger sent',
      },
    ],
    mismatchesNotListed: 0,
    totals: { mismatches: 2, unexplained: 2 },
  })
}

async function openInChromium(file: string, screenshot: string) {
  const { chromium } = await import('playwright-core')
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS })
  try {
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } })
    const errors: string[] = []
    const requests: string[] = []
    page.on('console', (m) => {
      if (m.type() === 'error') {
        errors.push(m.text())
      }
    })
    page.on('pageerror', (e) => errors.push(String(e)))
    page.on('request', (r) => {
      if (!r.url().startsWith('file://')) {
        requests.push(r.url())
      }
    })
    await page.goto(`file://${file}`, { waitUntil: 'load' })
    const charts = await page.$$eval('[data-chart]', (boxes) =>
      boxes.map((b) => ({
        id: b.getAttribute('data-chart'),
        shapes: b.querySelectorAll('svg rect, svg path').length,
        width: b.querySelector('svg')?.getBoundingClientRect().width ?? 0,
      })),
    )
    const title = await page.title()
    const embedded = await page.$eval('#report-data', (s) => JSON.parse(s.textContent ?? 'null') as { runId: string })
    // The filter script works.
    const filter = await page.$('input.filter')
    if (filter) {
      await filter.fill('zzz-no-such-row')
    }
    mkdirSync(ARTIFACTS, { recursive: true })
    await page.screenshot({ path: join(ARTIFACTS, screenshot), fullPage: true })
    return { charts, errors, requests, title, embedded }
  } finally {
    await browser.close()
  }
}

describe.skipIf(!haveChromium)(
  `HTML reports in headless Chromium${haveChromium ? '' : ` (skipped: ${CHROMIUM} is not installed; apt-get install chromium)`}`,
  () => {
    it('the plan report renders its four charts with drawn content, without console errors or network', async () => {
      const r = await openInChromium(planHtml, 'plan-report.png')
      expect(r.errors).toEqual([])
      expect(r.requests).toEqual([])
      expect(r.title).toContain('chatferry plan')
      expect(r.embedded.runId).toMatch(/^plan-/)
      expect(r.charts.map((c) => c.id)).toEqual(['items', 'rejects', 'months', 'timeline'])
      for (const c of r.charts) {
        expect(c.shapes, c.id ?? '').toBeGreaterThan(0)
        expect(c.width, c.id ?? '').toBeGreaterThan(100)
      }
      expect(existsSync(join(ARTIFACTS, 'plan-report.png'))).toBe(true)
    })

    it('the verify report renders, escapes what the platform returned, and draws its charts', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'chatferry-html-verify-'))
      const file = join(dir, 'verify-report.html')
      writeFileSync(file, renderVerifyHtml(verifySample()))
      const r = await openInChromium(file, 'verify-report.png')
      expect(r.errors).toEqual([])
      expect(r.requests).toEqual([])
      expect(r.charts.map((c) => c.id)).toEqual(['counts', 'mismatches'])
      for (const c of r.charts) {
        expect(c.shapes, c.id ?? '').toBeGreaterThan(0)
      }
      expect(readFileSync(file, 'utf8')).not.toContain('<script>alert(1)</script>')
    })
  },
)
