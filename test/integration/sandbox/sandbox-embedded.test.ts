/**
 * The sandbox on embedded PGlite (no Postgres server): in memory, and in a directory that keeps
 * apps, settings and data across restarts.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { afterAll, describe, expect, it } from 'vitest'

import { startSandbox } from '../../../src/sandbox/index.ts'
import { createPlatformClient } from '../../../src/target/client.ts'

const dir = mkdtempSync(join(tmpdir(), 'chatferry-sandbox-test-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('embedded store', () => {
  it('runs in memory', async () => {
    const sandbox = await startSandbox()
    try {
      const app = await sandbox.createApp({ id: 'mem', apiKey: 'mem-key' })
      const client = createPlatformClient({ baseUrl: app.baseUrl, apiKey: 'mem-key' })
      const res = await client.importUsers([{ uid: 'a', name: 'A' }])
      expect(res.results.get('a')?.ok).toBe(true)
      expect((await client.listUsers()).data.map((u) => u.uid)).toEqual(['a'])
      await client.importUsers([{ uid: 'b', name: 'B' }])
      await client.importGroups([{ guid: 'g', name: 'G', type: 'public' }])
      const now = Math.floor(Date.now() / 1000)
      const sent = await client.importMessages([
        { muid: 'm1', sender: 'a', receiverType: 'user', receiver: 'b', data: { text: 'it\'s "quoted", {braced}\\' }, tags: ['x'], sentAt: now - 2 },
        { muid: 'm2', sender: 'b', receiverType: 'group', receiver: 'g', data: { text: 'hi' }, sentAt: now - 1, readAt: now },
      ])
      expect([...sent.results.values()].every((r) => r.ok)).toBe(true)
      const again = await client.importMessages([
        { muid: 'm1', sender: 'a', receiverType: 'user', receiver: 'b', data: { text: 'x' }, sentAt: now - 2 },
      ])
      expect(again.results.get('m1')).toMatchObject({ ok: false, code: 'ERR_IMPORT_MUID_ALREADY_EXISTS' })
      const listed = await client.listMessages({ limit: 10 })
      expect(listed.data).toMatchObject([
        { data: { text: 'it\'s "quoted", {braced}\\' }, conversationId: 'a_user_b' },
        { data: { text: 'hi' }, conversationId: 'group_g' },
      ])
    } finally {
      await sandbox.close()
    }
  })

  it('keeps apps, settings and data in a directory across restarts; pre-creating the same app is idempotent', async () => {
    const first = await startSandbox({ state: { dir }, apps: [{ id: 'demo', apiKey: 'demo-key' }] })
    try {
      // With headers on, the answer shows the persisted limit (the published default sends none).
      await first.settings('demo', { requestsPerMinute: 7, rateLimitHeaders: true })
      const client = createPlatformClient({ baseUrl: `${first.url}/apps/demo/v3`, apiKey: 'demo-key' })
      await client.importUsers([{ uid: 'kept', name: 'Kept' }])
    } finally {
      await first.close()
    }
    const second = await startSandbox({ state: { dir }, apps: [{ id: 'demo', apiKey: 'demo-key' }] })
    try {
      const client = createPlatformClient({ baseUrl: `${second.url}/apps/demo/v3`, apiKey: 'demo-key' })
      expect((await client.listUsers()).data.map((u) => u.uid)).toEqual(['kept'])
      expect((await second.settings('demo')).requestsPerMinute).toBe(7)
      const res = await client.importUsers([{ uid: 'kept', name: 'Again' }])
      expect(res.results.get('kept')).toMatchObject({ ok: false, code: 'ERR_UID_ALREADY_EXISTS' })
      expect(res.rateLimit.limit).toBe(7)
    } finally {
      await second.close()
    }
  })

  it('refuses a non-loopback host unless asked', async () => {
    await expect(startSandbox({ host: '0.0.0.0' })).rejects.toThrow(/loopback/)
  })
})
