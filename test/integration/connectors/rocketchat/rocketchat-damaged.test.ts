/**
 * A Rocket.Chat dump whose messages file has a damaged length prefix in the middle, end to end
 * (`chatferry plan` and `run` as processes, into the sandbox): the damaged document is one problem
 * saying exactly which bytes it cost, the read resynchronises at the next document, and every
 * other message loads as the fixture predicts; the run ends with the rejects exit (3), again on a
 * rerun, which sends nothing. A collection file that is a symbolic link stops before any load.
 */
import { readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

import { serialize } from 'bson'
import { describe, expect, it } from 'vitest'

import { writeRocketChatDump } from '../../../fixtures/rocketchat/dump.ts'
import { expectedRocketChat } from '../../../fixtures/rocketchat/expected.ts'
import { rocketChatSeed } from '../../../fixtures/rocketchat/seed.ts'
import { fixtureRun } from '../../../helpers/fixture-run.ts'
import { runCli } from '../../../helpers/ledger-fixtures.ts'
import { compareWithExpected, expectMigration, sandboxContents } from '../../../helpers/run-e2e.ts'
import { checkRejects, rejectsOf } from '../../../helpers/run-rejects.ts'
import { useFileSandbox } from '../../../helpers/sandbox.ts'

const box = useFileSandbox()
const POLICIES = { retention: { oldMessages: 'send' as const } }

describe('chatferry on a Rocket.Chat dump with a damaged length prefix', () => {
  it('skips exactly the damaged document, names its byte range, and loads every message after it', async () => {
    const seed = rocketChatSeed()
    const path = writeRocketChatDump(seed)
    // A plain message in the middle of the file that no other document refers to.
    const referred = new Set(seed.messages.map((m) => m.tmid))
    const k = seed.messages.findIndex((m, i) => i >= seed.messages.length / 2 && !referred.has(m._id) && m.tmid === undefined && m.t === undefined)
    expect(k).toBeGreaterThan(0)
    expect(k).toBeLessThan(seed.messages.length - 2)
    const offset = seed.messages.slice(0, k).reduce((n, m) => n + serialize(m, { ignoreUndefined: true }).length, 0)
    const file = join(path, 'rocketchat_message.bson')
    const bytes = readFileSync(file)
    const damagedLength = serialize(seed.messages[k] as object, { ignoreUndefined: true }).length
    expect(bytes.readInt32LE(offset)).toBe(damagedLength)
    bytes.writeInt32LE(0x7fffffff, offset)
    writeFileSync(file, bytes)

    const { app, cfg } = await fixtureRun(box, {
      statePrefix: 'cf_rc_damaged',
      source: { connector: 'rocketchat', path, pageSize: 4 },
      policies: POLICIES,
    })
    const started = Date.now()
    const plan = await runCli(['plan', '--config', cfg]).done
    expect(plan.code, plan.stderr.slice(-3000)).toBe(0)
    const run = await runCli(['run', '--config', cfg]).done
    expect(run.code, run.stderr.slice(-3000)).toBe(3)

    const withoutK = { ...seed, messages: seed.messages.filter((_, i) => i !== k) }
    const expected = expectMigration(expectedRocketChat(withoutK), POLICIES, started)
    expect(compareWithExpected(expected.items, await sandboxContents(box.tsb.sandbox, app.id))).toEqual([])
    const listed = await rejectsOf(cfg)
    // Two problems without an id: the damaged prefix, and the fixture's truncated tail.
    const unnamed = listed.filter((r) => r.legacyId === '?')
    expect(unnamed.map((r) => r.message)).toEqual([
      expect.stringContaining(
        `length prefix 2147483647 at byte ${offset} is not a BSON document's; bytes ${offset}–${offset + damagedLength} (${damagedLength}) skipped to the next readable document, at byte ${offset + damagedLength}`,
      ),
      expect.stringMatching(/truncated: .*no readable document follows: bytes \d+–\d+ \(9\) cannot be read/),
    ])
    expected.rejects.delete('messages ?')
    checkRejects(
      expected,
      listed.filter((r) => r.legacyId !== '?'),
    )

    await box.tsb.sandbox.whenIdle()
    const before = (await box.tsb.sandbox.requests(app.id)).length
    const again = await runCli(['run', '--config', cfg]).done
    expect(again.code, again.stderr.slice(-3000)).toBe(3)
    await box.tsb.sandbox.whenIdle()
    expect((await box.tsb.sandbox.requests(app.id)).length).toBe(before)
  }, 180_000)

  it('a collection file that is a symbolic link stops before any load (exit 2), naming it', async () => {
    const path = writeRocketChatDump(rocketChatSeed())
    renameSync(join(path, 'users.bson'), join(path, '..', 'elsewhere.bson'))
    symlinkSync(join(path, '..', 'elsewhere.bson'), join(path, 'users.bson'))
    const { app, cfg } = await fixtureRun(box, { statePrefix: 'cf_rc_symlink', source: { connector: 'rocketchat', path }, policies: POLICIES })
    const res = await runCli(['run', '--config', cfg]).done
    expect(res.code, res.stderr.slice(-2000)).toBe(2)
    expect(res.stderr).toContain(`${join(path, 'users.bson')} (a symbolic link`)
    expect(await box.tsb.sandbox.requests(app.id)).toEqual([])
  }, 60_000)
})
