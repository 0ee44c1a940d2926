/**
 * `chatferry sandbox` as a user runs it: a child process, probed with plain fetch like curl,
 * stopped with SIGTERM.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process'
import { createServer } from 'node:net'

import { afterAll, describe, expect, it } from 'vitest'

import { CLI } from '../../helpers/cli-bundle.ts'

const children: ChildProcessWithoutNullStreams[] = []
afterAll(() => {
  for (const c of children) {
    if (c.exitCode === null) {
      c.kill('SIGKILL')
    }
  }
})

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer()
    s.once('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number }
      s.close(() => resolve(port))
    })
  })
}

function run(args: string[]): { child: ChildProcessWithoutNullStreams; stdout: () => string; stderr: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, CHATFERRY_LOG_LEVEL: 'warn' } })
  children.push(child)
  let out = ''
  let err = ''
  child.stdout.on('data', (d: Buffer) => (out += d.toString()))
  child.stderr.on('data', (d: Buffer) => (err += d.toString()))
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  return { child, stdout: () => out, stderr: () => err, exited }
}

async function waitFor(check: () => boolean, what: () => string, ms = 20_000): Promise<void> {
  const until = Date.now() + ms
  while (!check()) {
    if (Date.now() > until) {
      throw new Error(`timed out waiting: ${what()}`)
    }
    await new Promise((r) => setTimeout(r, 25))
  }
}

describe('chatferry sandbox', () => {
  it('starts, prints the listening line, answers like the platform, and exits 0 on SIGTERM', async () => {
    const port = await freePort()
    const started = Date.now()
    const p = run(['sandbox', '--port', String(port), '--app', 'demo:demo-key-0123456789'])
    await waitFor(
      () => p.stdout().includes('listening on'),
      () => p.stdout() + p.stderr(),
    )
    console.log(`chatferry sandbox answered its listening line after ${Date.now() - started} ms`)
    const base = `http://127.0.0.1:${port}`
    expect(p.stdout()).toContain(`chatferry sandbox listening on ${base}\n`)
    expect(p.stdout()).toContain(`${base}/apps/demo/v3`)

    const headers = { apikey: 'demo-key-0123456789', 'content-type': 'application/json' }
    const imported = await fetch(`${base}/apps/demo/v3/data_import/users`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ users: { alice: { uid: 'alice', name: 'Alice' } } }),
    })
    expect(imported.status).toBe(200)
    // As published, the data-import answers carry no rate-limit headers (rateLimitHeaders: false).
    expect(imported.headers.get('x-ratelimit-limit')).toBeNull()
    expect(((await imported.json()) as any).data.alice.success).toBe(true)

    const list = await fetch(`${base}/apps/demo/v3/users`, { headers })
    expect(((await list.json()) as any).data.map((u: { uid: string }) => u.uid)).toEqual(['alice'])

    const badKey = await fetch(`${base}/apps/demo/v3/users`, { headers: { apikey: 'wrong' } })
    expect(badKey.status).toBe(401)
    expect(((await badKey.json()) as any).error.code).toBe('AUTH_ERR_APIKEY_NOT_FOUND')

    const missing = await fetch(`${base}/nothing-here`)
    expect(missing.status).toBe(404)
    expect(((await missing.json()) as any).error.code).toBe('ERR_API_NOT_FOUND')

    const mgmt = await fetch(`${base}/apps`, { headers: { key: 'sandbox-key', secret: 'sandbox-secret' } })
    expect(((await mgmt.json()) as any).data.map((a: { id: string }) => a.id)).toEqual(['demo'])

    p.child.kill('SIGTERM')
    expect(await p.exited).toBe(0)
  })

  it('refuses bad flags with a usage error (exit 2)', async () => {
    const p = run(['sandbox', '--port', 'abc'])
    expect(await p.exited).toBe(2)
    expect(p.stderr()).toMatch(/--port/)
    const q = run(['sandbox', '--app', 'NoColon'])
    expect(await q.exited).toBe(2)
  })
})
