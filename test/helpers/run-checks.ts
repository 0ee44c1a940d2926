/**
 * Checks end-to-end tests of `chatferry run` share (the rejects check is `run-rejects.ts`): a rerun
 * that must send nothing, and what went over the wire since a point of the sandbox's request log.
 */
import { expect } from 'vitest'

import { runCli } from './ledger-fixtures.ts'
import type { TestSandbox } from './sandbox.ts'

/** Runs `chatferry run` again after a complete one: it reads nothing, ends with rejects (3) and sends no request. */
export async function expectRerunSendsNothing(tsb: TestSandbox, appId: string, cfg: string): Promise<void> {
  await tsb.sandbox.whenIdle()
  const before = (await tsb.sandbox.requests(appId)).length
  const again = await runCli(['run', '--config', cfg]).done
  expect(again.code, again.stderr.slice(-3000)).toBe(3)
  expect(again.stdout).toMatch(/read completed by an earlier run/)
  await tsb.sandbox.whenIdle()
  expect((await tsb.sandbox.requests(appId)).length).toBe(before)
}

/** The requests logged after the first `from`: items the imports wrote, and each chat write as `endpoint status items`. */
export async function sentSince(tsb: TestSandbox, appId: string, from: number): Promise<{ imported: number; chatWrites: string[] }> {
  await tsb.sandbox.whenIdle()
  const sent = (await tsb.sandbox.requests(appId)).slice(from)
  const imports = sent.filter((r) => ['users', 'groups', 'members', 'messages'].includes(r.endpoint))
  return {
    imported: imports.filter((r) => r.status === 200).reduce((n, r) => n + (r.itemCount ?? 0), 0),
    chatWrites: sent.filter((r) => r.endpoint.includes('.')).map((r) => `${r.endpoint} ${r.status} ${(r.items ?? []).length}`),
  }
}
