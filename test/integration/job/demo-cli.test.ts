/**
 * The README's first command, `chatferry demo`, as a process (the bundle the package ships, on a
 * fifth of the default sample: `--messages 6000` changes only the number of posts, not a stage, a
 * policy, a planted bad row or the re-hosted files; the full size costs the suite a minute of CPU): it
 * exits 0, prints the verification line, and the counts it prints agree with each other — the rows it wrote to the sample database, the rows each entity's
 * plan read (planned + skipped + rejected, extra items aside), the loaded table (done + skipped +
 * rejected, nothing remaining) and the quarantined list.
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { expect, it } from 'vitest'

import { PLANTED_BAD_ROWS } from '../../../src/demo/sample-legacy.ts'
import { runCli } from '../../helpers/ledger-fixtures.ts'

const ENTITIES = ['users', 'groups', 'members', 'messages'] as const
type E = (typeof ENTITIES)[number]

const int = (s: string | undefined) => Number((s ?? 'NaN').replace(/,/g, ''))

it('chatferry demo exits 0, verifies, and prints consistent counts', async () => {
  const dir = join(mkdtempSync(join(tmpdir(), 'chatferry-demo-')), 'demo')
  const res = await runCli(['demo', '--dir', dir, '--messages', '6000']).done
  const out = res.stdout
  expect(res.code, `${out}\n${res.stderr.slice(-3000)}`).toBe(0)
  expect(out).toMatch(/^verified: the sandbox holds exactly the items the ledger says were loaded/m)
  expect(out).not.toMatch(/demo FAILED/)
  // The dry run came first and sent nothing; verify found the platform as the ledger says.
  expect(out).toMatch(/^3\/6 dry run \(nothing sent, no item changed\):$/m)
  expect(out).toMatch(/^\s+verified: no mismatch$/m)

  // 1/6: the rows written to the legacy database.
  const written = /(\d+) accounts, (\d+) rooms, (\d+) memberships, (\d+) posts/.exec(out)
  expect(written, out).not.toBeNull()
  const source: Record<E, number> = { users: int(written?.[1]), groups: int(written?.[2]), members: int(written?.[3]), messages: int(written?.[4]) }
  // A realistic sample: a few hundred users, dozens of groups, and the posts asked for (the two
  // planted bad ones on top).
  expect(source.users).toBeGreaterThanOrEqual(200)
  expect(source.groups).toBeGreaterThanOrEqual(24)
  expect(source.messages).toBe(6000 + PLANTED_BAD_ROWS.messages.length)

  // 4/6: per entity, every row read ends planned, skipped or rejected; extra items (the system
  // user, placeholders) are counted among the users' new items and named after them.
  const plan = {} as Record<E, { rows: number; planned: number; skipped: number; rejected: number; extras: number }>
  for (const entity of ENTITIES) {
    const m = new RegExp(
      `^\\s*${entity}\\s+(\\d+) rows → (\\d+) new, (\\d+) updated, (\\d+) unchanged, (\\d+) skipped, (\\d+) rejected(?: \\(the item counts include ([^)]*) created for other records\\))?$`,
      'm',
    ).exec(out)
    expect(m, `no plan line for ${entity}:\n${out}`).not.toBeNull()
    const extras = (m?.[7] ?? '')
      .split(', ')
      .filter(Boolean)
      .reduce((n, part) => n + int(part.split(' ')[0]), 0)
    plan[entity] = { rows: int(m?.[1]), planned: int(m?.[2]) + int(m?.[3]) + int(m?.[4]), skipped: int(m?.[5]), rejected: int(m?.[6]), extras }
    expect(plan[entity].rows, entity).toBe(source[entity])
    expect(
      plan[entity].planned + plan[entity].skipped + plan[entity].rejected - plan[entity].extras,
      `${entity}: planned + skipped + rejected − extras`,
    ).toBe(source[entity])
  }
  // The system user of `systemMessages: as-user` is the one extra.
  expect(plan.users.extras).toBe(1)

  // 5/6: the loaded table — nothing planned, in flight or remaining; done + skipped + rejected is
  // what was planned. (The dry run's table above it has the same entity names: read after it.)
  const loadedSection = out.slice(out.indexOf('5/6 loaded in'))
  expect(out).toContain('5/6 loaded in')
  const loaded = {} as Record<E, { done: number; created: number; present: number; skipped: number; rejected: number }>
  for (const entity of ENTITIES) {
    const m = new RegExp(
      `^\\s*${entity}\\s+([\\d,]+)\\s+([\\d,]+)\\s+([\\d,]+)\\s+([\\d,]+)\\s+([\\d,]+)\\s+([\\d,]+)\\s+([\\d,]+)\\s+([\\d,]+)\\s`,
      'm',
    ).exec(loadedSection)
    expect(m, `no loaded line for ${entity}:\n${out}`).not.toBeNull()
    const [plannedLeft, inFlight, done, created, present, skipped, rejected, remaining] = (m?.slice(1, 9) ?? []).map(int) as number[]
    expect({ entity, plannedLeft, inFlight, remaining }).toEqual({ entity, plannedLeft: 0, inFlight: 0, remaining: 0 })
    loaded[entity] = {
      done: done as number,
      created: created as number,
      present: present as number,
      skipped: skipped as number,
      rejected: rejected as number,
    }
    expect(loaded[entity].created + loaded[entity].present, `${entity}: created + present = done`).toBe(loaded[entity].done)
    expect(loaded[entity].done + loaded[entity].skipped + loaded[entity].rejected, `${entity}: done + skipped + rejected`).toBe(
      plan[entity].planned + plan[entity].skipped + plan[entity].rejected,
    )
    // The sandbox refused nothing the plan accepted: every reject is a bad row found while planning.
    expect(loaded[entity].rejected, entity).toBe(plan[entity].rejected)
    expect(loaded[entity].skipped, entity).toBe(plan[entity].skipped)
  }

  // The quarantined list: exactly the rejects counted above, the planted bad rows among them.
  const quarantined = /^quarantined \((\d+)\): ([\s\S]*?)\nverified:/m.exec(out)
  expect(quarantined, out).not.toBeNull()
  const totalRejected = ENTITIES.reduce((n, e) => n + plan[e].rejected, 0)
  expect(int(quarantined?.[1])).toBe(totalRejected)
  for (const id of [...PLANTED_BAD_ROWS.users, ...PLANTED_BAD_ROWS.messages]) {
    expect(quarantined?.[2]).toContain(` ${id} [`)
  }

  // Policy outcomes are printed; old messages are the messages' only skips under the demo's policies.
  expect(out).toMatch(/^\s*policy outcomes:/m)
  const retentionSkipped = int(/retention: skipped (\d+)/.exec(out)?.[1])
  expect(retentionSkipped).toBe(plan.messages.skipped)
}, 300_000)
