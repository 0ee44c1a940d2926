/**
 * Issue 31, notifications of a fleet: `fleet run` tells the fleet file's `notify:` hooks when a
 * tenant ends needing a fix (`fleet.tenant.needs-fix`), as processes against the sandbox on a real
 * Postgres ledger, with a local HTTP receiver. A tenant whose source yields no rows at all ends
 * failed needing a fix: each hook that wants the event gets it once (JSON with the tenant, its job
 * and its reason; Slack format as `{"text": …}`), the tenant that loaded sends nothing, and a hook
 * that never answers does not keep `fleet run` from exiting. No body carries the fleet key, an
 * app key or the hook's secret header.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

import { afterAll, beforeAll, expect, it } from 'vitest'
import { parse, stringify } from 'yaml'

import type { TenantHistory } from '../../helpers/fleet-legacy.ts'
import { createFleetWorld, type FleetWorld } from '../../helpers/fleet-world.ts'
import { runCli } from '../../helpers/ledger-fixtures.ts'

const HOOK_SECRET = 'fleet-hook-secret-0123456789'
const HISTORY: TenantHistory = { users: 4, groups: 2, membersPerGroup: 3, messages: 40 }

interface Received {
  path: string
  headers: IncomingMessage['headers']
  body: Record<string, unknown>
}

let server: Server
let base = ''
const received: Received[] = []
const hanging: IncomingMessage[] = []
let world: FleetWorld

beforeAll(async () => {
  server = createServer((req, res) => {
    let text = ''
    req.on('data', (d: Buffer) => (text += d.toString()))
    req.on('end', () => {
      if (req.url === '/hang') {
        hanging.push(req)
        return
      }
      received.push({ path: req.url ?? '', headers: req.headers, body: JSON.parse(text) as Record<string, unknown> })
      res.writeHead(204).end()
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  world = await createFleetWorld({
    tenants: [
      { id: 'acme', history: HISTORY },
      // A source with no row at all: the tenant ends failed, needing a fix (src/fleet/empty-source.ts).
      { id: 'hooli', history: { users: 0, groups: 0, membersPerGroup: 0, messages: 0 } },
    ],
    perWindow: 5,
    windowMs: 1000,
  })
  const doc = parse(readFileSync(world.fleetFile, 'utf8')) as Record<string, unknown>
  writeFileSync(
    world.fleetFile,
    stringify({
      ...doc,
      notify: {
        hooks: [
          { url: `${base}/json`, format: 'json', headers: { authorization: '${FLEET_HOOK_TOKEN}' } },
          { url: `${base}/slack`, format: 'slack', events: ['fleet.tenant.needs-fix'] },
          { url: `${base}/other`, format: 'json', events: ['run.finished'] },
          { url: `${base}/hang`, format: 'slack', events: ['fleet.tenant.needs-fix'] },
        ],
        timeoutMs: 60_000,
        retries: 0,
        exitGraceMs: 2000,
      },
    }),
  )
}, 120_000)

afterAll(async () => {
  server?.closeAllConnections()
  await new Promise<void>((r) => server?.close(() => r()))
  await world?.close()
})

it('a tenant that ends needing a fix is told to the hooks once; the loaded tenant is not; a hanging hook does not hold the exit', async () => {
  const env = { ...world.env, FLEET_HOOK_TOKEN: `Bearer ${HOOK_SECRET}` }
  const run = await runCli(['fleet', 'run', '--fleet', world.fleetFile, '--json'], env).done
  // Exit 2: a tenant needs a fix first.
  expect(run.code, run.stderr.slice(-3000)).toBe(2)
  const summary = JSON.parse(run.stdout.trim().split('\n').at(-1) ?? '{}') as {
    tenants: { tenantId: string; state: string; needsFix: boolean; reason: string | null }[]
  }
  const hooli = summary.tenants.find((t) => t.tenantId === 'hooli')
  expect(hooli).toMatchObject({ state: 'failed', needsFix: true })
  expect(summary.tenants.find((t) => t.tenantId === 'acme')?.state).toBe('done')

  // The hanging hook got its request and the run exited anyway, giving it up after the grace.
  expect(hanging.length).toBe(1)
  expect(run.stderr).toMatch(/1 notification\(s\) still under way after 2000 ms: given up/)

  const json = received.filter((r) => r.path === '/json')
  expect(json.map((r) => r.body.event)).toEqual(['fleet.tenant.needs-fix'])
  expect(json[0]?.body).toMatchObject({
    source: 'chatferry',
    event: 'fleet.tenant.needs-fix',
    jobId: `${world.fleetId}_hooli`,
    fleet: world.fleetId,
    tenantId: 'hooli',
    state: 'failed',
    reason: hooli?.reason,
  })
  expect(String(json[0]?.body.reason)).toMatch(/yielded no rows/)
  expect(json[0]?.headers.authorization).toBe(`Bearer ${HOOK_SECRET}`)
  const slack = received.filter((r) => r.path === '/slack')
  expect(slack.length).toBe(1)
  expect(Object.keys(slack[0]?.body ?? {})).toEqual(['text'])
  expect(String(slack[0]?.body.text)).toMatch(
    new RegExp(
      `^chatferry fleet\\.tenant\\.needs-fix — job ${world.fleetId}_hooli: fleet ${world.fleetId}: tenant hooli needs a fix before it can run: .*yielded no rows`,
    ),
  )
  // A hook that wants other events gets nothing from a fleet run.
  expect(received.filter((r) => r.path === '/other')).toEqual([])

  const bodies = JSON.stringify(received.map((r) => r.body))
  for (const secret of [HOOK_SECRET, world.env.CHATFERRY_FLEET_KEY!, ...[...world.apps.values()].map((a) => a.apiKey)]) {
    expect(bodies).not.toContain(secret)
  }
  expect(run.stdout + run.stderr).not.toContain(HOOK_SECRET)
}, 300_000)
