/**
 * `fleet verify` on a tenant whose source repeats a row (the same user id twice): the plan rejects
 * the repeated row with its reason, and verify accounts for it — no "the ledger never planned"
 * false alarm advising `--delta` — so the tenant verifies clean; once the operator accepts that
 * reject, `fleet verify` names it beside the verdict and in the tenant's report. As processes against the sandbox
 * in its published defaults, on a real Postgres ledger.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'

import { afterAll, beforeAll, expect, it } from 'vitest'
import { parse, stringify } from 'yaml'

import type { VerifyReport } from '../../../src/report/schema.ts'
import { tenantSource, writeTenantLegacy } from '../../helpers/fleet-legacy.ts'
import { createPublishedFleet, type PublishedFleet } from '../../helpers/fleet-published.ts'
import { runCli, writeConfig } from '../../helpers/ledger-fixtures.ts'

let fleet: PublishedFleet
let legacyFile: string

beforeAll(async () => {
  fleet = await createPublishedFleet({ tenants: [{ id: 'acme', source: { connector: 'generic-sql', url: 'sqlite:/nonexistent' } }] })
  const file = join(fleet.dir, 'acme-dup.db')
  legacyFile = file
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

it("a row added at the source since: verify names it and advises the fleet's command for the tenant, which fixes it", async () => {
  const db = new DatabaseSync(legacyFile)
  db.prepare('INSERT INTO people VALUES (?, ?, ?)').run('acme-u9', 'acme user 9', Date.now())
  db.close()
  const out = join(fleet.dir, 'verify2')
  const before = await fleet.cli(['verify', '--out', out]).done
  expect(before.code, before.stdout).toBe(3)
  const report = JSON.parse(readFileSync(join(out, 'tenants', 'acme', 'verify-report.json'), 'utf8')) as VerifyReport
  const advised = `chatferry fleet run --delta --reconcile-keys --fleet ${fleet.file} --tenant acme`
  expect(report.mismatches.map((m) => m.note)).toEqual([`the source has 1 users the ledger never planned (run \`${advised}\`)`])
  const fix = await fleet.cli(['run', '--delta', '--reconcile-keys', '--tenant', 'acme']).done
  expect([0, 3], fix.stdout + fix.stderr.slice(-2000)).toContain(fix.code)
  const after = await fleet.cli(['verify', '--out', join(fleet.dir, 'verify3')]).done
  expect(after.code, after.stdout).toBe(0)
})

it('the repeated row accepted by the operator: fleet verify still passes and names the accepted reject, with where to read why', async () => {
  // accept-rejects reads the fleet's ledger through any configuration naming it; the target is not called.
  const cfg = writeConfig({ appId: 'unused', apiKey: 'unused', baseUrl: fleet.sbx.sandbox.url, stateUrl: fleet.ledger.url })
  const jobId = `${fleet.fleetId}_acme`
  const accept = await runCli(['accept-rejects', '--job', jobId, '--all', '--reason', 'a join repeated the row', '--config', cfg]).done
  expect(accept.code, accept.stdout + accept.stderr).toBe(0)
  const out = join(fleet.dir, 'verify4')
  const r = await fleet.cli(['verify', '--out', out]).done
  expect(r.code, r.stdout).toBe(0)
  expect(r.stdout).toMatch(
    new RegExp(`^acme {2}passed {2}0 mismatches \\(0 unexplained\\), 1 accepted rejects \\(\`chatferry rejects --accepted --job ${jobId}\`\\)`, 'm'),
  )
  const report = JSON.parse(readFileSync(join(out, 'tenants', 'acme', 'verify-report.json'), 'utf8')) as VerifyReport
  expect(report.acceptedRejects).toEqual({
    entities: { users: 1, groups: 0, members: 0, messages: 0 },
    command: `chatferry rejects --job ${jobId} --accepted`,
  })
  expect(readFileSync(join(out, 'tenants', 'acme', 'verify-report.html'), 'utf8')).toContain(
    'accepted rejects, not on the platform by decision: users 1',
  )
})
