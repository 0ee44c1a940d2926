/**
 * The resume tests' scenario: `chatferry run` killed with SIGKILL once while it plans (after the
 * members, somewhere in the messages) and twice while it loads (the second time once messages are
 * on the platform), each at a random moment; then run again to the end, after which the platform
 * must hold exactly the expected items (nothing missing, nothing twice) and the rejects list
 * exactly the expected bad rows.
 */
import { setTimeout as sleep } from 'node:timers/promises'

import { expect } from 'vitest'

import type { PoliciesInput } from '../../mappings/index.ts'
import { type CliRun, runCli } from './ledger-fixtures.ts'
import { compareWithExpected, countsOf, type ExpectedMigration, sandboxContents, writeRunConfig } from './run-e2e.ts'
import type { TestApp, TestSandbox } from './sandbox.ts'

/** The app's window: the sandbox counts `requestsPerMinute` per `windowMs`. */
const WINDOW_MS = 2000
/** Requests per window: slow enough that the kills land while the load is under way. */
const PER_WINDOW = 60

/**
 * An app of `tsb` that keeps history as old as the fixtures, at the pace the scenario is timed
 * for (60 requests of 15 items per 2 s window; the loader spreads its per-minute quota over that
 * window), and a `chatferry.yaml` for `run` against it with 15 s leases, so that the items a kill
 * leaves in flight are taken again within the test.
 */
export async function resumeRun(
  tsb: TestSandbox,
  o: { readonly stateUrl?: string; readonly source: Record<string, unknown>; readonly policies: PoliciesInput },
): Promise<{ app: TestApp; cfg: string }> {
  const app = await tsb.app({ retentionDays: 100_000, requestsPerMinute: PER_WINDOW, windowMs: WINDOW_MS })
  const cfg = writeRunConfig({
    appId: app.id,
    apiKey: app.apiKey,
    baseUrl: app.baseUrl,
    ...(o.stateUrl !== undefined ? { stateUrl: o.stateUrl } : {}),
    source: o.source,
    policies: o.policies,
    requestsPerMinute: (PER_WINDOW * 60_000) / WINDOW_MS,
    itemsPerRequest: 15,
    load: { quotaWindowMs: WINDOW_MS, leaseSeconds: 15 },
  })
  return { app, cfg }
}

async function kill(run: CliRun): Promise<{ stdout: string; stderr: string; signal: NodeJS.Signals | null; code: number | null }> {
  run.child.kill('SIGKILL')
  return run.done
}

const between = (min: number, max: number) => min + Math.floor(Math.random() * (max - min))

async function killWhilePlanningAndTwiceWhileLoading(cfg: string, tsb: TestSandbox, appId: string): Promise<string[]> {
  const log: string[] = []
  const counts = async () => countsOf(await sandboxContents(tsb.sandbox, appId))

  const first = runCli(['run', '--config', cfg])
  await first.waitFor('planned members', 60_000)
  await sleep(between(0, 400))
  const k1 = await kill(first)
  const planningKilled = !/policy outcomes:/.test(k1.stdout)
  log.push(`kill 1: ${k1.signal}, during planning: ${planningKilled}, platform: ${JSON.stringify(await counts())}`)
  expect(k1.signal, log.join('\n')).toBe('SIGKILL')
  expect(planningKilled, log.join('\n')).toBe(true)

  for (let i = 2; i <= 3; i++) {
    const run = runCli(['run', '--config', cfg])
    await run.waitFor('loader started', 60_000)
    if (i === 3) {
      const until = Date.now() + 60_000
      while ((await counts()).messages === 0 && Date.now() < until) {
        await sleep(50)
      }
      await sleep(between(0, 1500))
    } else {
      await sleep(between(400, 2000))
    }
    const k = await kill(run)
    log.push(
      `kill ${i}: ${k.signal}, platform: ${JSON.stringify(await counts())}${k.signal === null ? `; the run had ended by itself (exit ${k.code}): ${k.stderr.slice(-1500)}` : ''}`,
    )
    expect(k.signal, log.join('\n')).toBe('SIGKILL')
  }
  return log
}

/** Runs the scenario for the job of `cfg` (app `appId`), which must end as `expected` says. */
export async function killAndResume(cfg: string, tsb: TestSandbox, appId: string, expected: ExpectedMigration): Promise<void> {
  const log = await killWhilePlanningAndTwiceWhileLoading(cfg, tsb, appId)
  // The kills landed mid-load: something, but not everything, had been loaded.
  const partial = countsOf(await sandboxContents(tsb.sandbox, appId))
  expect(partial.messages, log.join('\n')).toBeGreaterThan(0)
  expect(partial.messages, log.join('\n')).toBeLessThan(expected.items.messages.size)

  const last = await runCli(['run', '--config', cfg]).done
  expect(last.code, `${log.join('\n')}\n${last.stderr.slice(-3000)}`).toBe(3)
  expect(last.stdout).toMatch(/read completed by an earlier run/)
  expect(compareWithExpected(expected.items, await sandboxContents(tsb.sandbox, appId)), log.join('\n')).toEqual([])
  const rejects = JSON.parse((await runCli(['rejects', '--config', cfg, '--json']).done).stdout) as { entity: string; legacyId: string }[]
  expect(rejects.map((r) => `${r.entity} ${r.legacyId}`).sort()).toEqual([...expected.rejects.keys()].sort())
}
