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

import { renderPlanHtml, renderVerifyHtml } from '../../../src/report/html.ts'
import { PlanReport, VerifyReport } from '../../../src/report/schema.ts'
import { loadMattermostFixture } from '../../fixtures/mattermost/load.ts'
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts'
import { runCli } from '../../helpers/ledger-fixtures.ts'

const CHROMIUM = '/usr/bin/chromium'
const ARTIFACTS = resolve(import.meta.dirname, '../../../test-artifacts')
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
let planJson = ''

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
  planJson = join(dir, 'plan-report.json')
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
    actualVsPlan: {
      planRunId: 'plan-20261121T110000Z-12345678',
      planGeneratedAt: '2026-11-21T11:00:00.000Z',
      entities: {
        users: {
          plan: { create: 8, loaded: 0, skipped: 0, rejected: 2 },
          ledger: { created: 7, alreadyPresent: 1, skipped: 0, rejected: 2, remaining: 0 },
          platform: 7,
        },
        groups: {
          plan: { create: 3, loaded: 2, skipped: 0, rejected: 1 },
          ledger: { created: 5, alreadyPresent: 0, skipped: 0, rejected: 1, remaining: 0 },
          platform: 5,
        },
        members: {
          plan: { create: 13, loaded: 0, skipped: 0, rejected: 0 },
          ledger: { created: 12, alreadyPresent: 0, skipped: 0, rejected: 1, remaining: 0 },
          platform: 12,
        },
        messages: { plan: null, ledger: { created: 17, alreadyPresent: 0, skipped: 2, rejected: 4, remaining: 1 }, platform: 17 },
      },
    },
  })
}

/**
 * The fixture's plan with what the fixture lacks and the defects needed: a pre-flight whose region
 * could not be observed, a system user (an extra item), a long reject reason naming a field, an edit
 * the conflict policy would hold back, and two years of months with the retention window starting
 * mid-June 2024.
 */
function planSample(base: PlanReport): PlanReport {
  const r = structuredClone(base)
  const notChecked = { count: 0, checked: false, samples: [] }
  r.target = {
    checkedAt: r.generatedAt,
    ok: true,
    baseUrl: 'http://127.0.0.1:9/apps/html-test/v3',
    apiKey: { works: true, fullAccess: null, error: null },
    region: { configured: 'us', observed: null, matches: null, note: 'not observable from the base URL' },
    existing: { users: { count: 0, checked: true, samples: [] }, groups: notChecked, members: notChecked, messages: notChecked },
    chatRequests: 3,
    problems: [],
  }
  const users = r.entities.users
  users.extras = { 'systemMessages: system user': 1 }
  users.items += 1
  users.toCreate += 1
  users.fates.new += 1
  const messages = r.entities.messages
  messages.sourceRows += 1
  messages.records += 1
  messages.rejected.total += 1
  const huge = 'customData: exceeds the platform limit of 64 KiB once encoded as JSON'
  messages.rejected.byReason[huge] = { count: 1, samples: ['p25huge'] }
  messages.rejected.samples[huge] = [
    { legacyId: 'p25huge', targetKey: '~legacy:p25huge', field: 'customData', problem: 'exceeds the platform limit of 64 KiB once encoded as JSON' },
  ]
  // A reject as reports before schema 1's reject samples carried it: legacy ids only.
  messages.rejected.total += 1
  messages.sourceRows += 1
  messages.records += 1
  messages.rejected.byReason['text: invalid'] = { count: 1, samples: ['p26old'] }
  // An edit the conflict policy would hold back: its item was edited on the platform (the reason as a delta records it).
  const held = {
    legacyId: 'p03tie',
    targetKey: 'p03tie',
    reason: 'text; changed on the platform after chatferry wrote it (message_edited received 2026-11-21T11:59:00.000Z) <b>',
  }
  messages.updates['message.edit'] = { apply: { count: 1, samples: [held] } }
  messages.conflicts['message.edit'] = { conflict: { count: 1, samples: [held] } }
  const months = Array.from({ length: 24 }, (_, i) => {
    const month = `${2024 + Math.floor(i / 12)}-${String((i % 12) + 1).padStart(2, '0')}`
    return { month, messages: 10 + i, beyondRetention: i < 5 ? 10 + i : i === 5 ? 7 : 0 }
  })
  r.retention = {
    ...r.retention,
    windowStart: '2024-06-16T00:00:00.000Z',
    months,
    beyondRetention: months.reduce((a, m) => a + m.beyondRetention, 0),
  }
  return PlanReport.parse(r)
}

/** Pairs of text boxes in one chart that overlap, and label texts that overlap a bar. */
async function overlaps(page: import('playwright-core').Page): Promise<string[]> {
  return page.$$eval('[data-chart] svg', (svgs) => {
    const out: string[] = []
    type Box = { left: number; right: number; top: number; bottom: number }
    const box = (e: { getBoundingClientRect(): Box }): Box => e.getBoundingClientRect()
    const hit = (a: Box, b: Box) => a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5
    for (const svg of svgs) {
      const chart = svg.closest('[data-chart]')?.getAttribute('data-chart') ?? '?'
      const texts = [...svg.querySelectorAll('text')]
      const rects = [...svg.querySelectorAll('rect')]
      texts.forEach((t, i) => {
        for (const u of texts.slice(i + 1)) {
          if (hit(box(t), box(u))) {
            out.push(`${chart}: "${t.textContent}" overlaps "${u.textContent}"`)
          }
        }
        // White text sits inside its bar on purpose.
        if ((t.getAttribute('style') ?? '').includes('#fff')) {
          return
        }
        for (const r of rects) {
          if (hit(box(t), box(r))) {
            out.push(`${chart}: "${t.textContent}" overlaps a bar`)
          }
        }
      })
    }
    return out
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
    const overlapping = await overlaps(page)
    const rows: Record<string, string[][]> = await page.$$eval('table', (tables) =>
      Object.fromEntries(
        tables.map((t) => [t.id, [...t.querySelectorAll('tbody tr')].map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent ?? ''))]),
      ),
    )
    const chartTexts: Record<string, string[]> = await page.$$eval('[data-chart]', (boxes) =>
      Object.fromEntries(boxes.map((b) => [b.getAttribute('data-chart'), [...b.querySelectorAll('svg text')].map((t) => t.textContent ?? '')])),
    )
    const marker = await page
      .$eval('[data-chart="months"]', (b) => {
        const m = b.querySelector('path[data-marker="retention"]')?.getBoundingClientRect()
        const bars = [...b.querySelectorAll('svg rect')].map((r) => ({
          title: r.querySelector('title')?.textContent ?? '',
          box: r.getBoundingClientRect(),
        }))
        return { x: m ? m.left + m.width / 2 : -1, bars: bars.map((x) => ({ title: x.title, left: x.box.left, right: x.box.right })) }
      })
      .catch(() => undefined)
    const embedded = await page.$eval('#report-data', (s) => JSON.parse(s.textContent ?? 'null') as { runId: string })
    // The filter script works.
    const filter = await page.$('input.filter')
    if (filter) {
      await filter.fill('zzz-no-such-row')
    }
    mkdirSync(ARTIFACTS, { recursive: true })
    await page.screenshot({ path: join(ARTIFACTS, screenshot), fullPage: true })
    return { charts, errors, requests, title, embedded, overlapping, rows, chartTexts, marker }
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

    it('the plan report: the fixed rows (region, users total, rejects, conflicts, retention marker) and no overlapping labels', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'chatferry-html-fixed-'))
      const file = join(dir, 'plan-report.html')
      const plan = planSample(PlanReport.parse(JSON.parse(readFileSync(planJson, 'utf8'))))
      writeFileSync(file, renderPlanHtml(plan))
      const r = await openInChromium(file, 'plan-report-fixed.png')
      expect(r.errors).toEqual([])
      expect(r.requests).toEqual([])
      expect(r.overlapping).toEqual([])

      // Region: a sentence, not "us configured, not observable observed".
      const region = r.rows.target?.find((row) => row[0] === 'region')
      expect(region?.[1]).toBe("configured us; the app's region could not be observed (not observable from the base URL)")
      expect(readFileSync(file, 'utf8')).not.toMatch(/not observable observed/)

      // Users: the chart's total says what the table says (8 source rows + 1 extra item).
      const users = r.rows.entities?.find((row) => row[0] === 'users')
      expect(users?.slice(0, 7)).toEqual(['users', '10', '8', '2', '10', '9', '1'])
      expect(r.chartTexts.items).toContain('10 + 1 extra')
      expect(r.chartTexts.items).toContain('26') // messages: its source rows (two synthetic rejects added), no extras

      // Rejects: the field, the problem, and each sample as legacy id → the key the ledger keeps it
      // under, with its own problem where it says more; a report without reject samples still names
      // what it can.
      expect(r.rows.rejected).toEqual(
        expect.arrayContaining([
          [
            'users',
            'username',
            'unreadable in the source row',
            '1',
            'u08noname → ~legacy:u08noname (is null: no username, first/last name or nickname to name the user)',
          ],
          [
            'messages',
            'channelid',
            'unreadable in the source row',
            '2',
            'p22nochannel → ~legacy:p22nochannel (unknown channel c99missing); p23brokendm → ~legacy:p23brokendm (direct channel name "not-a-dm-name" is not <userId>__<userId>)',
          ],
          ['messages', 'customData', 'exceeds the platform limit of 64 KiB once encoded as JSON', '1', 'p25huge → ~legacy:p25huge'],
          ['messages', 'text', 'invalid', '1', 'p26old → no item (not mapped)'],
        ]),
      )
      // The JSON report carries the same: field, target key and problem per sampled reject.
      expect(plan.entities.messages.rejected.samples['unreadable channelid']).toEqual([
        { legacyId: 'p22nochannel', targetKey: '~legacy:p22nochannel', field: 'channelid', problem: 'unknown channel c99missing' },
        {
          legacyId: 'p23brokendm',
          targetKey: '~legacy:p23brokendm',
          field: 'channelid',
          problem: 'direct channel name "not-a-dm-name" is not <userId>__<userId>',
        },
      ])

      // The conflict preview: what the delta would do with an update of an item changed on the platform, escaped.
      expect(r.rows.conflicts).toEqual([
        [
          'messages',
          'message.edit',
          'held back, status conflict (changes.conflicts: report)',
          '1',
          'p03tie → p03tie: text; changed on the platform after chatferry wrote it (message_edited received 2026-11-21T11:59:00.000Z) <b>',
        ],
      ])

      // Retention: the marker sits inside June 2024's bar, half way (the window starts on the 16th).
      const june = r.marker?.bars.find((b) => b.title.startsWith('2024-06: 7 beyond'))
      expect(june).toBeDefined()
      const at = ((r.marker?.x ?? 0) - (june?.left ?? 0)) / ((june?.right ?? 1) - (june?.left ?? 0))
      expect(at).toBeGreaterThan(0.45)
      expect(at).toBeLessThan(0.55)
      // Two years of months: labelled every other month, none touching (checked above).
      expect(r.chartTexts.months).toContain('24-01')
      expect(r.chartTexts.months).not.toContain('24-02')
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
      expect(r.overlapping).toEqual([])
      // Sign-off: the plan's counts, the ledger's and the platform's, and what differs.
      expect(r.rows['actual-vs-plan']).toEqual([
        ['users', '8', '0', '0', '2', '7', '1', '0', '2', '0', '7', 'platform -1 vs ledger'],
        ['groups', '3', '2', '0', '1', '5', '0', '0', '1', '0', '5', 'as planned'],
        ['members', '13', '0', '0', '0', '12', '0', '0', '1', '0', '12', 'created or present -1 vs plan; rejected +1 vs plan'],
        ['messages', '-', '-', '-', '-', '17', '0', '2', '4', '1', '17', '1 not loaded yet'],
      ])
    })
  },
)
