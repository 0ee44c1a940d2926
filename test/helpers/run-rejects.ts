/** The rejected rows of a job as `chatferry rejects --json` lists them, checked against an expectation. */
import { expect } from 'vitest'

import { runCli } from './ledger-fixtures.ts'
import type { ExpectedMigration } from './run-e2e.ts'

export interface ListedReject {
  readonly entity: string
  readonly legacyId: string
  readonly code: string | null
  readonly message: string | null
}

/** `chatferry rejects --config <cfg> --json`, which must exit 0. */
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
