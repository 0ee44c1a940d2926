/** Checks the end-to-end tests share: `chatferry rejects --json` against the expected bad rows, and a rerun that sends nothing. */
import { expect } from 'vitest'

import { runCli } from './ledger-fixtures.ts'
import type { ExpectedMigration } from './run-e2e.ts'
import type { TestSandbox } from './sandbox.ts'

export interface ListedReject {
  readonly entity: string
  readonly legacyId: string
  readonly code: string | null
  readonly message: string | null
}

/** What `chatferry rejects --config <cfg> --json` lists (it must exit 0). */
export async function rejectsOf(cfg: string): Promise<ListedReject[]> {
  const r = await runCli(['rejects', '--config', cfg, '--json']).done
  expect(r.code, r.stderr).toBe(0)
  return JSON.parse(r.stdout) as ListedReject[]
}

/** Every expected bad row is listed once with its legacy id, a code and a reason naming the field; nothing else is. */
export function checkRejects(expected: ExpectedMigration, listed: readonly ListedReject[]): void {
  const got = new Map(listed.map((r) => [`${r.entity} ${r.legacyId}`, r]))
  expect(listed.length, JSON.stringify(listed, null, 1)).toBe(got.size)
  expect([...got.keys()].sort()).toEqual([...expected.rejects.keys()].sort())
  for (const [key, want] of expected.rejects) {
    const r = got.get(key)
    expect(r?.code, key).toBeTruthy()
    expect(r?.message ?? '', key).toContain(want.field)
  }
}

/** Runs the completed job of `cfg` again: it exits 3 (the fixture's rejects), reads nothing anew and sends nothing. */
export async function expectRerunSendsNothing(cfg: string, tsb: TestSandbox, appId: string): Promise<void> {
  await tsb.sandbox.whenIdle()
  const before = (await tsb.sandbox.requests(appId)).length
  const again = await runCli(['run', '--config', cfg]).done
  expect(again.code, again.stderr.slice(-3000)).toBe(3)
  expect(again.stdout).toMatch(/read completed by an earlier run/)
  await tsb.sandbox.whenIdle()
  expect((await tsb.sandbox.requests(appId)).length).toBe(before)
}
