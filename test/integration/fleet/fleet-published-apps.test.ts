/**
 * A fleet provisioned and migrated against the sandbox in its published defaults (a new app holds
 * the platform's sample users unless the create body says `skipSampleData: true`), through the CLI
 * from `fleet provision` on: each provisioned app holds exactly its tenant's data, and `fleet
 * verify` passes them; an app created elsewhere without skipSampleData holds the five sample users,
 * and `fleet verify` names them as the platform's sample data.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

import { afterAll, beforeAll, expect, it } from 'vitest'

import { keyVault } from '../../../src/fleet/key-vault.ts'
import type { VerifyReport } from '../../../src/report/schema.ts'
import { SAMPLE_USERS } from '../../../src/target/sample-data.ts'
import { bindTenants } from '../../helpers/fleet-fixtures.ts'
import { expectedKeys, type TenantHistory } from '../../helpers/fleet-legacy.ts'
import { createPublishedFleet, type PublishedFleet } from '../../helpers/fleet-published.ts'

const HISTORY: TenantHistory = { users: 4, groups: 2, membersPerGroup: 3, messages: 20 }
let fleet: PublishedFleet
let sampleApp: { id: string; apiKey: string }

beforeAll(async () => {
  fleet = await createPublishedFleet({
    tenants: [
      { id: 'acme', history: HISTORY },
      { id: 'globex', history: HISTORY },
      { id: 'legacyco', history: HISTORY },
    ],
    app: { extensions: ['polls', 'reactions'], team: { admins: ['ops@vendor.example'] } },
  })
  // legacyco's app was created elsewhere, the platform's way: with its sample data.
  const created = await fleet.sbx.mgmt.createApp({ name: `${fleet.fleetId} legacyco`, region: 'us' })
  sampleApp = { id: created.appId, apiKey: created.restApiKey }
  await bindTenants(fleet.ledger.url, fleet.fleetId, keyVault(fleet.fleetKey), new Map([['legacyco', sampleApp]]))
})

afterAll(async () => {
  await fleet?.close()
})

it('an app created without skipSampleData holds the platform’s five sample users', async () => {
  expect(await fleet.heldKeys(sampleApp.id)).toEqual(SAMPLE_USERS.map((u) => u.uid).sort())
})

it('provisioned apps hold exactly their tenant’s data; fleet verify passes them and names the sample users of the other', async () => {
  const provision = await fleet.cli(['provision']).done
  expect(provision.code, provision.stdout + provision.stderr).toBe(0)
  const apps = await fleet.appIds()
  for (const id of ['acme', 'globex']) {
    const appId = apps.get(id) as string
    expect(await fleet.heldKeys(appId), id).toEqual([])
    // Its setup, exactly: the extensions and the team member the fleet file names.
    const extensions = (await fleet.sbx.mgmt.listExtensions(appId)).filter((e) => e.enabled).map((e) => e.id)
    expect(extensions.sort(), id).toEqual(['polls', 'reactions'])
    expect((await fleet.sbx.mgmt.listCollaborators(appId)).map((c) => [c.email, c.role])).toEqual([['ops@vendor.example', 'admin']])
  }

  const run = await fleet.cli(['run']).done
  expect(run.code, run.stdout + run.stderr.slice(-3000)).toBe(0)
  for (const id of ['acme', 'globex']) {
    expect(await fleet.heldKeys(apps.get(id) as string), id).toEqual(expectedKeys(id, HISTORY).sort())
  }
  expect(await fleet.heldKeys(sampleApp.id)).toEqual([...expectedKeys('legacyco', HISTORY), ...SAMPLE_USERS.map((u) => u.uid)].sort())

  const out = join(fleet.dir, 'verify')
  const verify = await fleet.cli(['verify', '--out', out, '--json']).done
  const summary = JSON.parse(verify.stdout) as { tenants: { tenantId: string; verdict: string; unexplained: number }[] }
  expect(summary.tenants.map((t) => [t.tenantId, t.verdict, t.unexplained])).toEqual([
    ['acme', 'passed', 0],
    ['globex', 'passed', 0],
    ['legacyco', 'mismatches', 5],
  ])
  expect(verify.code).toBe(3)
  const report = JSON.parse(readFileSync(join(out, 'tenants', 'legacyco', 'verify-report.json'), 'utf8')) as VerifyReport
  const sample = report.mismatches.filter((m) => m.note?.includes("the platform's sample user"))
  expect(sample.map((m) => m.targetKey).sort()).toEqual(SAMPLE_USERS.map((u) => u.uid).sort())
  expect(report.mismatches.length).toBe(5)
})
