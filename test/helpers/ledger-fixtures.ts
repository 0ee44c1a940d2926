/**
 * Fixtures for the ledger and loader tests: valid import items, a configuration file pointing
 * at a sandbox app, and the CLI run as a child process.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { missingV8Flags } from '../../bin/v8-flags.js'
import type { PlannedItem } from '../../src/state/store.ts'
import { memberKey } from '../../src/target/schemas.ts'
import { CLI } from './cli-bundle.ts'
import { recordOutput } from './secrets.ts'

export { CLI } from './cli-bundle.ts'

/** `n` users u0…u(n-1) as planned items. */
export function users(n: number, prefix = 'u'): PlannedItem[] {
  return Array.from({ length: n }, (_, i) => ({
    legacyId: String(i),
    targetKey: `${prefix}${i}`,
    payload: { uid: `${prefix}${i}`, name: `User ${i}`, createdAt: 1_700_000_000 + i },
  }))
}

/** `n` groups g0…, owned by u0. */
export function groups(n: number, owner = 'u0'): PlannedItem[] {
  return Array.from({ length: n }, (_, i) => ({
    legacyId: String(i),
    targetKey: `g${i}`,
    payload: { guid: `g${i}`, name: `Group ${i}`, type: 'public', owner, createdAt: 1_700_000_000 },
  }))
}

/** Members: user i joins group i % groups. */
export function members(nUsers: number, nGroups: number): PlannedItem[] {
  return Array.from({ length: nUsers }, (_, i) => {
    const guid = `g${i % nGroups}`
    const uid = `u${i}`
    return {
      legacyId: `${guid}:${uid}`,
      targetKey: memberKey(guid, uid),
      payload: { memberId: memberKey(guid, uid), guid, uid, scope: 'participant' },
    }
  })
}

/** `n` one-to-one text messages between users, sent recently (within the retention window), oldest first by sortKey. */
export function messages(n: number, nUsers: number, prefix = 'm', base = Math.floor(Date.now() / 1000) - 86_400 * 30): PlannedItem[] {
  return Array.from({ length: n }, (_, i) => {
    const sentAt = base + i
    return {
      legacyId: String(i),
      targetKey: `${prefix}${i}`,
      sortKey: sentAt,
      payload: {
        muid: `${prefix}${i}`,
        sender: `u${i % nUsers}`,
        receiverType: 'user',
        receiver: `u${(i + 1) % nUsers}`,
        category: 'message',
        type: 'text',
        data: { text: `hello ${i}` },
        sentAt,
      },
    }
  })
}

export interface ConfigFileOptions {
  appId: string
  apiKey: string
  baseUrl: string
  stateUrl?: string
  stateDir?: string
  requestsPerMinute?: number
  itemsPerRequest?: number
  timeoutMs?: number
}

/** Writes a chatferry.yaml into a fresh temporary directory; returns its path. */
export function writeConfig(o: ConfigFileOptions): string {
  const dir = mkdtempSync(join(tmpdir(), 'chatferry-test-'))
  const file = join(dir, 'chatferry.yaml')
  const state = o.stateUrl !== undefined ? `  url: ${o.stateUrl}\n` : `  dir: ${o.stateDir ?? join(dir, '.chatferry')}\n`
  writeFileSync(
    file,
    `target:\n  appId: ${o.appId}\n  region: us\n  apiKey: ${o.apiKey}\n  baseUrl: ${o.baseUrl}\n` +
      `  timeoutMs: ${o.timeoutMs ?? 5000}\n` +
      `  quota:\n    requestsPerMinute: ${o.requestsPerMinute ?? 60}\n    itemsPerRequest: ${o.itemsPerRequest ?? 50}\n` +
      `state:\n${state}`,
  )
  return file
}

export interface CliRun {
  readonly child: ChildProcess
  readonly done: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>
  /** Resolves when stderr/stdout contains `text`. */
  waitFor(text: string | RegExp, timeoutMs?: number): Promise<void>
}

/**
 * Runs the CLI as a child process (the Node running the tests, i.e. the project's Node 24, with the
 * V8 flags of the installed command); what
 * it printed is recorded for the secret scan (test/helpers/secrets.ts).
 */
export function runCli(args: readonly string[], env: Record<string, string> = {}): CliRun {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, CHATFERRY_LOG_LEVEL: 'info', ...env }
  // Under the V8 flags the installed command runs with (bin/v8-flags.js), but those NODE_OPTIONS sets.
  const child = spawn(process.execPath, [...missingV8Flags([], childEnv.NODE_OPTIONS), CLI, ...args], {
    env: childEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  const waiters: { test: string | RegExp; resolve: () => void }[] = []
  const check = () => {
    const all = stdout + stderr
    for (const w of [...waiters]) {
      if (typeof w.test === 'string' ? all.includes(w.test) : w.test.test(all)) {
        waiters.splice(waiters.indexOf(w), 1)
        w.resolve()
      }
    }
  }
  child.stdout?.on('data', (d: Buffer) => ((stdout += d.toString()), check()))
  child.stderr?.on('data', (d: Buffer) => ((stderr += d.toString()), check()))
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>((res) => {
    child.on('exit', (code, signal) => {
      // Let the pipes drain; then keep what it printed for the suite's secret scan.
      setTimeout(() => {
        recordOutput(`cli-${args[0] ?? 'none'}`, `exit ${code ?? signal}\n--- stdout\n${stdout}\n--- stderr\n${stderr}`)
        res({ code, signal, stdout, stderr })
      }, 20)
    })
  })
  return {
    child,
    done,
    waitFor(test, timeoutMs = 30_000) {
      return new Promise<void>((res, rej) => {
        const t = setTimeout(() => rej(new Error(`timed out waiting for ${String(test)}; stderr: ${stderr.slice(-2000)}`)), timeoutMs)
        waiters.push({ test, resolve: () => (clearTimeout(t), res()) })
        check()
      })
    },
  }
}
