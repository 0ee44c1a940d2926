/**
 * `chatferry demo --source stream-chat-export` on a small sample, in this process (`runDemo`, with
 * a smaller sample than `--messages` allows, no CLI start-up): the same history written as a Stream Chat
 * v2 export is read by the stream-chat connector, migrated into the sandbox and verified, and the
 * only rejects are the planted bad rows in Stream's own kinds (two times that are no RFC 3339 times,
 * an attachment without a URL). The full-size demo over the SQLite database is demo-cli.test.ts.
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'

import { expect, it } from 'vitest'

import { EXIT } from '../../../src/cli/exit-codes.ts'
import { runDemo } from '../../../src/cli/run-demo.ts'

it('the demo reads the sample as a Stream Chat export, verifies it and quarantines only its planted rows', async () => {
  const out = new PassThrough()
  let text = ''
  out.on('data', (c: Buffer) => (text += c.toString('utf8')))
  const dir = join(mkdtempSync(join(tmpdir(), 'chatferry-demo-stream-')), 'demo')
  const code = await runDemo({
    dir,
    source: 'stream-chat-export',
    size: { users: 30, channels: 4, groupDms: 2, groupMessages: 300, directMessages: 100 },
    out,
  })
  expect(code, text).toBe(EXIT.OK)
  expect(text).toMatch(/as a Stream Chat export \(v2, line-separated JSON\): .* \(read by the stream-chat connector\)$/m)
  expect(text).toMatch(/^\s+verified: no mismatch$/m)
  expect(text).toMatch(/^verified: the sandbox holds exactly the items the ledger says were loaded/m)
  const quarantined = /^quarantined \((\d+)\): ([\s\S]*?)\nverified:/m.exec(text)
  expect(quarantined?.[1], text).toBe('3')
  expect(quarantined?.[2]).toContain('users u-broken-name [SOURCE_ROW_INVALID] created_at')
  expect(quarantined?.[2]).toContain('messages m-bad-time [SOURCE_ROW_INVALID] created_at')
  expect(quarantined?.[2]).toContain('messages m-bad-json [SOURCE_ROW_INVALID] attachments[0].asset_url')
}, 180_000)
