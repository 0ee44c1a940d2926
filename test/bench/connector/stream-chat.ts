/**
 * A Stream Chat channel export for the connector benchmark, in both documented layouts, kept in
 * `<tmpdir>/cf-bench-stream/<layout>-<size>.*` and reused: 500 users, 40 channels (one in four a
 * livestream, the rest messaging), messages with embedded users (v1) or sender ids (v2), mentions,
 * thread replies, edits, reactions and uploaded files on Stream's CDN.
 * Raw: for v2 (`stream-chat`), every line split and `JSON.parse`d as it streams; for v1
 * (`stream-chat-json`), `JSON.parse` of the whole file, read whole (what a reader without a
 * streaming parser does: it cannot go past V8's largest string, about 512 MiB, so v1 is measured at
 * 100k messages only).
 */
import { createReadStream, createWriteStream, existsSync, mkdirSync, readFileSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'

import type { ConnectorBenchSystem, RawRead } from './system.ts'
import { warmFiles } from './warm-files.ts'

const USERS = 500
const CHANNELS = 40
const T0 = Date.UTC(2024, 0, 2)

type Layout = 'json' | 'jsonl'
const dir = join(tmpdir(), 'cf-bench-stream')
const pathOf = (layout: Layout, size: number) => join(dir, `${layout}-${size}.${layout}`)
const iso = (ms: number) => new Date(ms).toISOString().replace('Z', '123Z')
const uid = (i: number) => `user-${i}`
const user = (i: number) => ({
  id: uid(i),
  name: `User ${i}`,
  role: 'user',
  created_at: iso(T0 - 86_400_000),
  updated_at: iso(T0 - 86_400_000),
  banned: false,
  online: false,
})
const channelOf = (c: number) => {
  const type = c % 4 === 0 ? 'livestream' : 'messaging'
  return {
    id: `channel-${c}`,
    type,
    cid: `${type}:channel-${c}`,
    created_by: uid(c),
    created_at: iso(T0 - 3_600_000),
    updated_at: iso(T0 - 3_600_000),
    name: `Channel ${c}`,
    member_count: 30,
  }
}

function message(k: number, c: number, embed: boolean) {
  const sender = k % USERS
  const at = T0 + k * 1000
  const m: Record<string, unknown> = {
    id: `msg-${k}`,
    text: k % 9 === 0 ? `ping @user-${(k * 7) % USERS} about build ${k}` : `message ${k} in the usual chatter of a busy channel`,
    type: k % 10 > 0 && k % 3 === 0 ? 'reply' : 'regular',
    user: embed ? user(sender) : uid(sender),
    attachments: [],
    mentioned_users: k % 9 === 0 ? [embed ? user((k * 7) % USERS) : uid((k * 7) % USERS)] : [],
    created_at: iso(at),
    updated_at: iso(k % 13 === 0 ? at + 7000 : at),
    pinned: false,
    silent: false,
  }
  if (m.type === 'reply') {
    m.parent_id = `msg-${k - (k % 10)}`
  }
  if (k % 13 === 0) {
    m.message_text_updated_at = iso(at + 7000)
  }
  if (k % 17 === 0 && embed) {
    m.latest_reactions = [{ type: 'like', user_id: uid((k + 1) % USERS), created_at: iso(at + 500) }]
  }
  if (k % 50 === 0) {
    m.attachments = [
      {
        type: 'image',
        image_url: `https://us-east.stream-io-cdn.com/1/attachments/shot-${k}.png?Signature=abc`,
        mime_type: 'image/png',
        file_size: 1234,
        fallback: `shot-${k}.png`,
      },
    ]
  }
  void c
  return m
}

/** Writes the export as a stream (never the whole text in memory). */
async function generate(layout: Layout, size: number): Promise<void> {
  mkdirSync(dir, { recursive: true })
  const out = createWriteStream(`${pathOf(layout, size)}.partial`)
  const write = (s: string) => (out.write(s) ? Promise.resolve() : new Promise<void>((r) => out.once('drain', r)))
  const perChannel = Math.ceil(size / CHANNELS)
  let k = 0
  if (layout === 'jsonl') {
    for (let i = 0; i < USERS; i++) {
      await write(`${JSON.stringify({ type: 'user', item: user(i) })}\n`)
    }
  } else {
    await write('[')
  }
  for (let c = 0; c < CHANNELS; c++) {
    const ch = channelOf(c)
    const members = Array.from({ length: 30 }, (_, j) => ({
      user_id: uid((c * 31 + j) % USERS),
      role: j === 0 ? 'owner' : 'member',
      channel_role: 'channel_member',
      created_at: ch.created_at,
      updated_at: ch.created_at,
      banned: false,
    }))
    if (layout === 'jsonl') {
      await write(`${JSON.stringify({ type: 'channel', item: ch })}\n`)
      for (const m of members) {
        await write(`${JSON.stringify({ type: 'member', item: { ...m, channel_type: ch.type, channel_id: ch.id } })}\n`)
      }
      for (let n = 0; n < perChannel && k < size; n++, k++) {
        await write(`${JSON.stringify({ type: 'message', item: { ...message(k, c, false), channel_type: ch.type, channel_id: ch.id } })}\n`)
        if (k % 17 === 0) {
          await write(
            `${JSON.stringify({ type: 'reaction', item: { message_id: `msg-${k}`, type: 'like', user_id: uid((k + 1) % USERS), created_at: iso(T0 + k * 1000 + 500) } })}\n`,
          )
        }
      }
    } else {
      await write(`${c > 0 ? ',' : ''}{"channel":${JSON.stringify({ ...ch, created_by: user(c) })},"messages":[`)
      for (let n = 0; n < perChannel && k < size; n++, k++) {
        await write(`${n > 0 ? ',' : ''}${JSON.stringify({ ...message(k, c, true), cid: ch.cid })}`)
      }
      await write(`],"members":${JSON.stringify(members.map((m) => ({ ...m, user: user(Number(m.user_id.slice(5))) })))}}`)
    }
  }
  if (layout === 'json') {
    await write(']')
  }
  await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())))
  const { renameSync } = await import('node:fs')
  renameSync(`${pathOf(layout, size)}.partial`, pathOf(layout, size))
}

async function rawLines(size: number): Promise<RawRead> {
  const started = performance.now()
  let rows = 0
  const path = pathOf('jsonl', size)
  for await (const line of createInterface({ input: createReadStream(path, { highWaterMark: 1024 * 1024 }), crlfDelay: Infinity })) {
    const o = JSON.parse(line) as { type: string }
    if (o.type === 'message') {
      rows++
    }
  }
  return { rows, bytes: statSync(path).size, ms: performance.now() - started }
}

function rawWhole(size: number): RawRead {
  const started = performance.now()
  const path = pathOf('json', size)
  const text = readFileSync(path, 'utf8')
  const rows = (JSON.parse(text) as { messages: unknown[] }[]).reduce((n, c) => n + c.messages.length, 0)
  return { rows, bytes: text.length, ms: performance.now() - started }
}

function system(layout: Layout): ConnectorBenchSystem {
  return {
    label: layout === 'jsonl' ? 'Stream Chat export, v2 (line-separated JSON)' : 'Stream Chat export, v1 (one JSON document)',
    rawName: layout === 'jsonl' ? 'each line split and JSON.parsed as it streams' : 'JSON.parse of the whole file',
    prepare: async (size, regenerate) => {
      if (regenerate || !existsSync(pathOf(layout, size))) {
        await generate(layout, size)
      }
    },
    raw: async (size) => (layout === 'jsonl' ? rawLines(size) : rawWhole(size)),
    warm: (size) => warmFiles([pathOf(layout, size)]),
    sourceConfig: (size, pageSize) => ({ connector: 'stream-chat', path: pathOf(layout, size), pageSize }),
  }
}

export default system('jsonl')
export const v1 = system('json')
