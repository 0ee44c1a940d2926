/**
 * A mistyped tenant value selects no row of the shared source: `fleet run` of that tenant alone
 * ends `failed`, needing a fix, naming the value and the query — exit 2, nothing loaded — where
 * before it ended `done` with exit 0. The same fleet's correctly typed tenant loads and exits 0.
 * As processes against the sandbox in its published defaults, on a real Postgres ledger.
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'

import { afterAll, beforeAll, expect, it } from 'vitest'

import { createPublishedFleet, type PublishedFleet } from '../../helpers/fleet-published.ts'

let fleet: PublishedFleet

beforeAll(async () => {
  const file = join(mkdtempSync(join(tmpdir(), 'cf-shared-')), 'shared.db')
  const db = new DatabaseSync(file)
  db.exec('CREATE TABLE people (id TEXT PRIMARY KEY, name TEXT, org TEXT)')
  const rows: [string, string][] = [
    ['a1', 'acme'],
    ['a2', 'acme'],
    ['g1', 'globex'],
  ]
  for (const [id, org] of rows) {
    db.prepare('INSERT INTO people VALUES (?, ?, ?)').run(id, `person ${id}`, org)
  }
  db.close()
  fleet = await createPublishedFleet({
    sources: {
      shared: {
        connector: 'generic-sql',
        url: `sqlite:${file}`,
        tenantColumn: 'org',
        entities: { users: { query: 'SELECT id, name, org FROM people' } },
      },
    },
    tenants: [
      { id: 'acme', source: { template: 'shared', tenantValue: 'acme' } },
      // Mistyped: the source's value is globex.
      { id: 'globex', source: { template: 'shared', tenantValue: 'globx' } },
    ],
  })
  const p = await fleet.cli(['provision']).done
  expect(p.code, p.stdout + p.stderr).toBe(0)
})

afterAll(async () => {
  await fleet?.close()
})

it('the mistyped tenant run alone: needs a fix, naming its value and query; exit 2; nothing loaded', async () => {
  const r = await fleet.cli(['run', '--tenant', 'globex']).done
  expect(r.code, r.stdout + r.stderr.slice(-2000)).toBe(2)
  expect(r.stdout).toContain('some tenants need a fix first')
  expect(r.stdout).toContain('tenant globex: its source yielded no rows at all')
  expect(r.stdout).toContain(`chatferry_tenant.org = 'globx'`)
  expect(r.stdout).toContain("SELECT * FROM (SELECT id, name, org FROM people ) AS chatferry_tenant WHERE chatferry_tenant.org = 'globx'")
  expect(r.stdout).not.toMatch(/globex\s+done/)
  const apps = await fleet.appIds()
  expect(await fleet.heldKeys(apps.get('globex') as string)).toEqual([])
  const status = await fleet.cli(['status']).done
  expect(status.stdout).toContain('its source yielded no rows at all')
})

it('the correctly typed tenant loads its rows and exits 0, and again on a rerun', async () => {
  const r = await fleet.cli(['run', '--tenant', 'acme']).done
  expect(r.code, r.stdout + r.stderr.slice(-2000)).toBe(0)
  const apps = await fleet.appIds()
  expect(await fleet.heldKeys(apps.get('acme') as string)).toEqual(['a1', 'a2'])
  // A rerun reads only what is new (none): its ledger's items say the source is not empty.
  const again = await fleet.cli(['run', '--tenant', 'acme']).done
  expect(again.code, again.stdout + again.stderr.slice(-2000)).toBe(0)
})
