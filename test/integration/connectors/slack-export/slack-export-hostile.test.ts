/**
 * Hostile or damaged Slack exports, end to end as an operator runs them (`chatferry plan`, `run`,
 * `rejects` as processes, into the sandbox): a ZIP bomb, a corrupt entry, an element over the cap,
 * Latin-1 bytes, a `ts` repeated in a later day file, and every bad entry name (absolute, `..`, a
 * duplicate, a symbolic link — in a ZIP and in an unpacked folder) are each a problem naming the
 * entry and the export, listed by `rejects`; everything else of the export loads exactly as the
 * seed predicts; the run ends with the rejects exit (3), again on a rerun. A missing `users.json`
 * or `channels.json`, or an export over its size cap, stops before any load (exit 2) naming it.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { beforeAll, describe, expect, it } from 'vitest'

import { expectedSlack } from '../../../fixtures/slack-export/expected.ts'
import { EXPORT_TIME, exportFiles, writeExportFolder, writeExportZip } from '../../../fixtures/slack-export/generate.ts'
import { type HostileEntry, writeHostileZip } from '../../../fixtures/slack-export/hostile.ts'
import { SL, slackSeed, ts } from '../../../fixtures/slack-export/seed.ts'
import { createTestDatabase } from '../../../helpers/db.ts'
import { runCli } from '../../../helpers/ledger-fixtures.ts'
import { dropWithin } from '../../../helpers/loader-harness.ts'
import { compareWithExpected, type ExpectedMigration, expectMigration, sandboxContents, writeRunConfig } from '../../../helpers/run-e2e.ts'
import { checkRejects, rejectsOf } from '../../../helpers/run-rejects.ts'
import { useFileSandbox } from '../../../helpers/sandbox.ts'

const box = useFileSandbox()
const POLICIES = { retention: { oldMessages: 'send' as const } }
const NEST = 'Acme Slack export'
const KiB = 1024
const MiB = 1024 * KiB

const msg = (s: number, text: string) => ({ type: 'message', user: SL.alice, text, ts: ts(s) })

/** A new job on a new ledger and app, reading `source`. */
async function job(source: Record<string, unknown>) {
  const app = await box.tsb.app({ retentionDays: 100_000, requestsPerMinute: 6000, windowMs: 10_000 })
  const state = await createTestDatabase('cf_slack_hostile')
  box.cleanups.push(() => dropWithin(state))
  const cfg = writeRunConfig({
    appId: app.id,
    stateUrl: state.url,
    apiKey: app.apiKey,
    baseUrl: app.baseUrl,
    source,
    policies: POLICIES,
    load: { quotaWindowMs: 10_000 },
  })
  return { app, cfg }
}

function tmp(): string {
  const dir = mkdtempSync(join(tmpdir(), 'cf-slack-hostile-'))
  box.cleanups.push(async () => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** Plans, runs (exit 3: rejects), runs again (exit 3, nothing sent twice); the sandbox holds exactly the seed's migration, the rejects are the seed's and `extra`. */
async function migratesAroundTheDamage(cfg: string, appId: string, extra: ExpectedMigration['rejects'], naming: Record<string, string[]>) {
  const started = Date.now()
  const plan = await runCli(['plan', '--config', cfg]).done
  expect(plan.code, plan.stderr.slice(-3000)).toBe(0)
  expect(plan.stdout).toContain('unreadable file')
  const run = await runCli(['run', '--config', cfg]).done
  expect(run.code, run.stderr.slice(-3000)).toBe(3)

  const expected = expectMigration(expectedSlack(slackSeed(), { exportTime: EXPORT_TIME }), POLICIES, started)
  for (const [k, v] of extra) {
    expected.rejects.set(k, v)
  }
  const actual = await sandboxContents(box.tsb.sandbox, appId)
  expect(compareWithExpected(expected.items, actual)).toEqual([])
  const listed = await rejectsOf(cfg)
  checkRejects(expected, listed)
  for (const [key, words] of Object.entries(naming)) {
    const r = listed.find((x) => `${x.entity} ${x.legacyId}` === key)
    for (const w of words) {
      expect(r?.message ?? '', key).toContain(w)
    }
  }

  await box.tsb.sandbox.whenIdle()
  const before = (await box.tsb.sandbox.requests(appId)).length
  const again = await runCli(['run', '--config', cfg]).done
  expect(again.code, again.stderr.slice(-3000)).toBe(3)
  await box.tsb.sandbox.whenIdle()
  expect((await box.tsb.sandbox.requests(appId)).length).toBe(before)
  return listed
}

const reject = (entity: 'users' | 'groups' | 'members' | 'messages', legacyId: string, field: string) =>
  [`${entity} ${legacyId}`, { entity, legacyId, field }] as const

describe('chatferry on a hostile Slack export ZIP', () => {
  const seed = slackSeed()
  const repeated = seed.messages.find((m) => m.folder === 'general' && m.raw.ts === ts(60)) as { day: string }
  const firstGeneralDay = seed.messages
    .filter((m) => m.folder === 'general')
    .map((m) => m.day)
    .sort()[0] as string
  const bomb = Buffer.concat([
    Buffer.from(`[${JSON.stringify(msg(900, 'x')).slice(0, -1)}, "pad": "`),
    Buffer.alloc(64 * MiB, 'a'),
    Buffer.from('"}]'),
  ])
  const latin1 = Buffer.concat([
    Buffer.from(`[{"type":"message","user":"${SL.alice}","text":"caf`),
    Buffer.from([0xe9]),
    Buffer.from(`","ts":"${ts(903)}"}]`),
  ])
  const entries: HostileEntry[] = [
    ...[...exportFiles(seed)].map(([name, content]) => ({ name: `${NEST}/${name}`, content })),
    { name: '/users.json', content: JSON.stringify([{ id: 'U66EVIL', name: 'evil', real_name: 'Evil' }]) },
    { name: `../outside/${firstGeneralDay}`, content: JSON.stringify([msg(901, 'OUTSIDE')]) },
    { name: `${NEST}/general/${firstGeneralDay}`, content: JSON.stringify([msg(902, 'DUPLICATE')]) },
    { name: `${NEST}/random/2024-01-20.json`, content: '../../../../etc/passwd', mode: 0o120777 },
    { name: `${NEST}/random/2024-01-21.json`, content: bomb },
    { name: `${NEST}/random/2024-01-27.json`, content: bomb, declaredSize: 1000 },
    { name: `${NEST}/general/2024-01-22.json`, content: JSON.stringify([msg(904, 'CORRUPT')]), corrupt: true },
    { name: `${NEST}/general/2024-01-23.json`, content: JSON.stringify([msg(905, 'b'.repeat(200 * KiB))]) },
    { name: `${NEST}/general/2024-01-24.json`, content: latin1 },
    { name: `${NEST}/general/2024-01-25.json`, content: JSON.stringify([msg(60, 'REPEAT')]) },
  ]
  let zip: string
  beforeAll(async () => {
    zip = await writeHostileZip(join(tmp(), 'hostile export.zip'), entries)
  }, 60_000)

  it('reports each damaged or refused entry as a problem naming it and the export, loads everything else, and exits 3 (again on a rerun)', async () => {
    const { app, cfg } = await job({ connector: 'slack-export', path: zip, pageSize: 5, maxEntryBytes: 4 * MiB, maxElementBytes: 64 * KiB })
    const extra = new Map([
      reject('users', 'entry:/users.json', 'file'),
      reject('messages', `entry:../outside/${firstGeneralDay}`, 'file'),
      reject('messages', `entry:${NEST}/general/${firstGeneralDay}`, 'file'),
      reject('messages', `entry:${NEST}/random/2024-01-20.json`, 'file'),
      reject('messages', `${SL.random}/2024-01-21.json#0`, 'file'),
      reject('messages', `${SL.random}/2024-01-27.json#0`, 'file'),
      reject('messages', `${SL.general}/2024-01-22.json#0`, 'file'),
      reject('messages', `${SL.general}/2024-01-23.json#0`, 'file'),
      reject('messages', `${SL.general}/2024-01-24.json#0`, 'file'),
      reject('messages', `${SL.general}:${ts(60)}`, 'ts'),
    ])
    const listed = await migratesAroundTheDamage(cfg, app.id, extra, {
      'users entry:/users.json': ['absolute', zip],
      [`messages entry:../outside/${firstGeneralDay}`]: ['..', zip],
      [`messages entry:${NEST}/general/${firstGeneralDay}`]: ['second entry with the same name'],
      [`messages entry:${NEST}/random/2024-01-20.json`]: ['symbolic link'],
      [`messages ${SL.random}/2024-01-21.json#0`]: [`entry random/2024-01-21.json of ${zip}`, 'source.maxEntryBytes'],
      [`messages ${SL.random}/2024-01-27.json#0`]: [`entry random/2024-01-27.json of ${zip}`, 'is corrupt', 'expected 1000'],
      [`messages ${SL.general}/2024-01-22.json#0`]: [`entry general/2024-01-22.json of ${zip}`, 'corrupt'],
      [`messages ${SL.general}/2024-01-23.json#0`]: ['general/2024-01-23.json', 'source.maxElementBytes'],
      [`messages ${SL.general}/2024-01-24.json#0`]: ['general/2024-01-24.json', 'not UTF-8', '0xE9'],
      [`messages ${SL.general}:${ts(60)}`]: [`general/${repeated.day}`, 'general/2024-01-25.json'],
    })
    expect(listed.length).toBeGreaterThan(extra.size)
    const actual = JSON.stringify(await sandboxContents(box.tsb.sandbox, app.id))
    for (const text of ['OUTSIDE', 'DUPLICATE', 'CORRUPT', 'REPEAT', 'U66EVIL']) {
      expect(actual).not.toContain(text)
    }
  }, 180_000)

  it('an export that inflates to more than source.maxArchiveBytes stops before any load (exit 2), naming the cap', async () => {
    const { app, cfg } = await job({ connector: 'slack-export', path: zip, maxArchiveBytes: 1 * MiB })
    const res = await runCli(['run', '--config', cfg]).done
    expect(res.code, res.stderr.slice(-2000)).toBe(2)
    expect(res.stderr).toContain('source.maxArchiveBytes')
    expect(await box.tsb.sandbox.requests(app.id)).toEqual([])
  }, 60_000)
})

describe('chatferry on an unpacked Slack export with symbolic links', () => {
  it('reports a symlinked day file and a symlinked folder as problems, never reading what they point to', async () => {
    const dir = tmp()
    const outside = join(dir, 'outside')
    mkdirSync(outside)
    writeFileSync(join(outside, '2024-01-26.json'), JSON.stringify([{ type: 'message', user: SL.alice, text: 'OUTSIDE', ts: ts(906) }]))
    const root = writeExportFolder(join(dir, 'export'), exportFiles(slackSeed()))
    symlinkSync(join(outside, '2024-01-26.json'), join(root, 'general', '2024-01-26.json'))
    symlinkSync(outside, join(root, 'linked'))
    const { app, cfg } = await job({ connector: 'slack-export', path: root, pageSize: 5 })
    const extra = new Map([reject('messages', 'entry:general/2024-01-26.json', 'file'), reject('messages', 'entry:linked', 'file')])
    await migratesAroundTheDamage(cfg, app.id, extra, {
      'messages entry:general/2024-01-26.json': ['symbolic link', root],
      'messages entry:linked': ['symbolic link', root],
    })
    expect(JSON.stringify(await sandboxContents(box.tsb.sandbox, app.id))).not.toContain('OUTSIDE')
  }, 180_000)
})

describe('chatferry on a Slack export without its metadata files', () => {
  it.each(['users.json', 'channels.json'])(
    'an export without %s stops before any load (exit 2), naming the file',
    async (file) => {
      const files = exportFiles(slackSeed())
      files.delete(file)
      const zip = await writeExportZip(join(tmp(), 'export.zip'), files)
      const { app, cfg } = await job({ connector: 'slack-export', path: zip })
      for (const command of ['plan', 'run']) {
        const res = await runCli([command, '--config', cfg]).done
        expect(res.code, res.stderr.slice(-2000)).toBe(2)
        expect(res.stderr).toContain(`no ${file}`)
      }
      expect(await box.tsb.sandbox.requests(app.id)).toEqual([])
    },
    60_000,
  )
})
