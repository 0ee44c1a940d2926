/**
 * `fleet verify` on a tenant whose source repeats a row (the same user id twice): the plan rejects
 * the repeated row with its reason, and verify accounts for it — no "the ledger never planned"
 * false alarm advising `--delta` — so the tenant verifies clean. As processes against the sandbox
 * in its published defaults, on a real Postgres ledger.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

import { afterAll, beforeAll, expect, it } from 'vitest'
import { parse, stringify } from 'yaml'

import type { VerifyReport } from '../../src/report/schema.ts'
import { tenantSource, writeTenantLegacy } from '../helpers/fleet-legacy.ts'
import { createPublishedFleet, type PublishedFleet } from '../helpers/fleet-published.ts'

let fleet: PublishedFleet

beforeAll(async () => {
  fleet = await createPublishedFleet({ tenants: [{ id: 'acme', source: { connector: 'generic-sql', url: 'sqlite:/nonexistent' } }] })
  const file = join(fleet.dir, 'acme-dup.db')
  writeTenantLegacy(file, 'acme', { users: 4, groups: 1, membersPerGroup: 2, messages: 6 })
  const source = tenantSource(file, 'acme') as { entities: { users: { query: string } } }
  // The last user repeated, word for word, as a join gone wrong would.
  source.entities.users.query = `${source.entities.users.query} UNION ALL SELECT id, name, changed AS updated_at FROM people WHERE id = 'acme-u3'`
  const text = readFileSync(fleet.file, 'utf8')
  const doc = parse(text) as { tenants: { source: unknown }[] }
  doc.tenants[0]!.source = source
  writeFileSync(fleet.file, stringify(doc))
})

afterAll(async () => {
  await fleet?.close()
})

it('the repeated row is rejected by the plan and verify accounts for it: clean', async () => {
  for (const args of [['provision'], ['run']]) {
    const r = await fleet.cli(args).done
    expect([0, 3], `${args.join(' ')}: ${r.stdout}${r.stderr.slice(-2000)}`).toContain(r.code)
  }
  const out = join(fleet.dir, 'verify')
  const r = await fleet.cli(['verify', '--out', out]).done
  const report = JSON.parse(readFileSync(join(out, 'tenants', 'acme', 'verify-report.json'), 'utf8')) as VerifyReport
  expect(report.mismatches.filter((m) => !m.explained)).toEqual([])
  expect(report.mismatches.some((m) => m.note?.includes('never planned'))).toBe(false)
  expect(r.code, r.stdout).toBe(0)
})
