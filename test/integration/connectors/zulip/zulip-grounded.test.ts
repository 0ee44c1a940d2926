/**
 * End to end over a Zulip realm filled the way Zulip writes it (test/fixtures/zulip/grounded.ts):
 * `chatferry run` (a process) → the sandbox, then each planted row is checked against what the
 * READMEs say must come of it, written out by hand in the fixture: the real address
 * (`delivery_email`) reaches `metadata.email` when `email` is Zulip's alias, an integration bot's
 * Markdown arrives as written, a pre-2022 edit history (`prev_subject`) still shows the old topic,
 * an old-style DM (topic `""`) carries no topic, custom and Unicode reactions are kept.
 */
import { beforeAll, describe, expect, it } from 'vitest'

import { groundedZulipSeed, ZULIP_GROUNDED_EXPECT } from '../../../fixtures/zulip/grounded.ts'
import { loadZulipFixture } from '../../../fixtures/zulip/load.ts'
import { createTestDatabase } from '../../../helpers/db.ts'
import { fixtureRun } from '../../../helpers/fixture-run.ts'
import { runCli } from '../../../helpers/ledger-fixtures.ts'
import { dropWithin } from '../../../helpers/loader-harness.ts'
import { type SandboxContents, sandboxContents } from '../../../helpers/run-e2e.ts'
import { useFileSandbox } from '../../../helpers/sandbox.ts'

const box = useFileSandbox()

describe('chatferry run: a Zulip realm as Zulip writes it', () => {
  let got: SandboxContents

  beforeAll(async () => {
    const source = await createTestDatabase('cf_zug_src')
    box.cleanups.push(() => dropWithin(source))
    await loadZulipFixture(source.url, groundedZulipSeed())
    const { app, cfg } = await fixtureRun(box, {
      statePrefix: 'cf_zug_state',
      source: { connector: 'zulip', url: source.url, realm: 'grounded', pageSize: 2 },
      policies: { retention: { oldMessages: 'send' } },
    })
    const res = await runCli(['run', '--config', cfg]).done
    expect(res.code, res.stderr.slice(-3000)).toBe(0)
    got = await sandboxContents(box.tsb.sandbox, app.id)
  }, 90_000)

  const data = (id: string) => got.messages.find((m) => m.key === id)?.row.data as { text?: string; metadata?: Record<string, unknown> } | undefined

  it("users' real addresses reach metadata.email; Zulip's alias stays as metadata.zulipEmail", () => {
    for (const [id, email] of Object.entries(ZULIP_GROUNDED_EXPECT.emails)) {
      const meta = got.users.find((u) => u.key === id)?.row.metadata as { email?: string; zulipEmail?: string } | undefined
      expect(meta?.email, id).toBe(email)
      if (ZULIP_GROUNDED_EXPECT.zulipEmail[Number(id)] !== undefined) {
        expect(meta?.zulipEmail).toBe(ZULIP_GROUNDED_EXPECT.zulipEmail[Number(id)])
      }
    }
  })

  it('every message with its text and topic; the old edit history and the reactions are kept', () => {
    expect(got.messages.map((m) => m.key).sort()).toEqual(Object.keys(ZULIP_GROUNDED_EXPECT.texts).sort())
    for (const [id, text] of Object.entries(ZULIP_GROUNDED_EXPECT.texts)) {
      expect(data(id)?.text, id).toBe(text)
      expect(data(id)?.metadata?.topic, id).toBe(ZULIP_GROUNDED_EXPECT.topics[id])
    }
    expect((data('7002')?.metadata?.editHistory as { previousTopics?: string[] }).previousTopics).toEqual(ZULIP_GROUNDED_EXPECT.previousTopics)
    expect((data('7002')?.metadata?.legacy as { reactions?: unknown }).reactions).toEqual(ZULIP_GROUNDED_EXPECT.reactions)
  })
})
