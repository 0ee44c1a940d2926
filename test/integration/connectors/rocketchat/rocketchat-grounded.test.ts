/**
 * End to end over a Rocket.Chat dump filled the way Rocket.Chat and its integrations write it
 * (test/fixtures/rocketchat/grounded.ts): `chatferry run` (a process) → the sandbox, then each
 * planted document is checked against what the READMEs say must come of it, written out by hand in
 * the fixture: integration posts with an empty `msg` arrive as their cards' text (a long one split
 * within the platform's limits), a shared location as a map link, e-mails reach `metadata.email`,
 * and what refers to a damaged room is rejected naming that room's own reason. Only the id rule
 * (mappings/ids.ts: Rocket.Chat's mixed-case ids are hashed) is borrowed, to find the items.
 */
import { beforeAll, describe, expect, it } from 'vitest'

import { messageMuid, partMuid, toPlatformId } from '../../../../mappings/index.ts'
import { writeRocketChatDump } from '../../../fixtures/rocketchat/dump.ts'
import { CI_LOG_LINES, GR, GROUNDED_EXPECT, groundedRocketChatSeed } from '../../../fixtures/rocketchat/grounded.ts'
import { fixtureRun } from '../../../helpers/fixture-run.ts'
import { runCli } from '../../../helpers/ledger-fixtures.ts'
import { type SandboxContents, sandboxContents } from '../../../helpers/run-e2e.ts'
import { type ListedReject, rejectsOf } from '../../../helpers/run-rejects.ts'
import { type TestApp, useFileSandbox } from '../../../helpers/sandbox.ts'

const box = useFileSandbox()
const pid = toPlatformId

interface Data {
  text: string
  metadata?: Record<string, unknown>
}

describe('chatferry run: a Rocket.Chat dump as Rocket.Chat and its integrations write it', () => {
  let app: TestApp
  let got: SandboxContents
  let rejects: ListedReject[] = []

  beforeAll(async () => {
    const path = writeRocketChatDump(groundedRocketChatSeed())
    let cfg: string
    ;({ app, cfg } = await fixtureRun(box, {
      statePrefix: 'cf_rcg_state',
      source: { connector: 'rocketchat', path, pageSize: 3 },
      policies: { retention: { oldMessages: 'send' } },
    }))
    const res = await runCli(['run', '--config', cfg]).done
    // The damaged room, its member and its message are rejected: exit 3.
    expect(res.code, res.stderr.slice(-3000)).toBe(3)
    rejects = await rejectsOf(cfg)
    got = await sandboxContents(box.tsb.sandbox, app.id)
  }, 120_000)

  const row = (e: 'users' | 'groups' | 'messages', key: string) => got[e].find((r) => r.key === key)?.row
  const data = (legacyId: string) => row('messages', messageMuid(legacyId))?.data as Data | undefined

  it('every integration card, quote and shared location arrives as text, none skipped as empty', () => {
    for (const [id, text] of Object.entries(GROUNDED_EXPECT.texts)) {
      expect(data(id)?.text, id).toBe(text)
    }
    // What a card holds besides its text stays with the message.
    for (const [id, left] of Object.entries(GROUNDED_EXPECT.leftovers)) {
      expect(data(id)?.metadata?.attachments, id).toEqual(left)
    }
    expect(data('Ms05LocationXxxxx')?.metadata?.location).toEqual(GROUNDED_EXPECT.location)
  })

  it('a card too long for one message is split within the limits, every line of it delivered', () => {
    const first = data(GROUNDED_EXPECT.longId)
    const second = row('messages', partMuid(messageMuid(GROUNDED_EXPECT.longId), 2))?.data as Data | undefined
    expect(row('messages', partMuid(messageMuid(GROUNDED_EXPECT.longId), 3))).toBeUndefined()
    // The split cuts at whitespace: the parts joined by a space, runs of whitespace as one.
    const whole = `${first?.text ?? ''} ${second?.text ?? ''}`.replace(/\s+/g, ' ')
    expect(first?.text.startsWith('Nightly build log\nstep 0001 passed')).toBe(true)
    for (const line of CI_LOG_LINES) {
      expect(whole, line).toContain(line)
    }
    for (const part of [first, second]) {
      expect(Buffer.byteLength(JSON.stringify(part))).toBeLessThanOrEqual(10 * 1024)
    }
  })

  it("users' e-mails reach metadata.email with their verified flag; users without one have none", () => {
    expect(got.users.map((u) => u.key).sort()).toEqual(GROUNDED_EXPECT.users.map(pid).sort())
    for (const id of GROUNDED_EXPECT.users) {
      const metadata = row('users', pid(id))?.metadata as { email?: string; emailVerified?: boolean } | null
      const want = GROUNDED_EXPECT.emails[id]
      expect({ email: metadata?.email, verified: metadata?.emailVerified }, id).toEqual({ email: want?.email, verified: want?.verified })
    }
  })

  it('reactions name their users by username (the newer `names` beside them changes nothing)', () => {
    const legacy = data('Ms01HelloXxxxxxxx')?.metadata?.legacy as { reactions?: unknown } | undefined
    expect(legacy?.reactions).toEqual({ thumbsup: GROUNDED_EXPECT.reactions.thumbsup.map(pid) })
  })

  it('groups as named; a livechat room and a direct room are no groups', () => {
    const names = Object.fromEntries(got.groups.map((g) => [g.key, g.row.name]))
    expect(names).toEqual(Object.fromEntries(Object.entries(GROUNDED_EXPECT.groups).map(([id, name]) => [pid(id), name])))
    expect(data('Ms11DirectXxxxxxx')).toBeDefined()
    expect(row('messages', messageMuid('Ms11DirectXxxxxxx'))).toMatchObject({ receiver_type: 'user', receiver: pid(GR.bob) })
  })

  it("what refers to a damaged room is rejected naming the room's own reason, never as to an unknown group", () => {
    const byId = new Map(rejects.map((r) => [r.legacyId, r]))
    for (const [id, field] of Object.entries(GROUNDED_EXPECT.rejects)) {
      expect(byId.get(id)?.message, id).toMatch(new RegExp(`^${field}: `))
    }
    expect(rejects).toHaveLength(Object.keys(GROUNDED_EXPECT.rejects).length)
    for (const id of ['Ms10LostXxxxxxxxx', `${GR.noName}/${GR.bob}`]) {
      expect(byId.get(id)?.message, id).toContain(`its group "${GR.noName}" was rejected (name: `)
      expect(byId.get(id)?.message, id).not.toMatch(/unknown group/)
    }
  })
})
