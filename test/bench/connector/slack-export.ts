/**
 * A Slack export (unpacked folder) for the connector benchmark. The generated export is kept in
 * `<tmpdir>/cf-bench-slack/<size>/` and reused: 500 users, 40 public channels, 200 messages per
 * channel-day file, with mentions, thread replies, edits, reactions and shared files. Raw:
 * `JSON.parse` of every day file, read whole, in the same process (what any reader of an export
 * must at least do).
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import type { ConnectorBenchSystem, RawRead } from './system.ts'
import { warmFiles } from './warm-files.ts'

const USERS = 500
const CHANNELS = 40
const PER_DAY = 200
const T0S = 1_704_186_000

const dirOf = (size: number) => join(tmpdir(), 'cf-bench-slack', String(size))
const uid = (i: number) => `U${String(i).padStart(8, '0')}`

function message(k: number, day: number, n: number, channel: number): Record<string, unknown> {
  const ts = `${T0S + day * 86_400 + n * 30 + channel}.${String(k % 1_000_000).padStart(6, '0')}`
  const m: Record<string, unknown> = {
    client_msg_id: `c${k}`,
    type: 'message',
    text:
      k % 9 === 0
        ? `ping <@${uid((k * 7) % USERS)}> about build ${k}, see <https://ci.example/${k}|the log>`
        : `message ${k} in the usual chatter of a busy channel`,
    user: uid(k % USERS),
    ts,
    team: 'T01ACME',
  }
  if (n % 10 > 0 && n % 3 === 0) {
    m.thread_ts = `${T0S + day * 86_400 + Math.floor(n / 10) * 300 + channel}.${String((k - (n % 10)) % 1_000_000).padStart(6, '0')}`
    m.parent_user_id = uid((k - (n % 10)) % USERS)
  }
  if (k % 13 === 0) {
    m.edited = { user: m.user, ts: `${T0S + day * 86_400 + n * 30 + 7}.000000` }
  }
  if (k % 17 === 0) {
    m.reactions = [{ name: '+1', users: [uid((k + 1) % USERS), uid((k + 2) % USERS)], count: 2 }]
  }
  if (k % 50 === 0) {
    m.files = [
      {
        id: `F${k}`,
        name: `shot-${k}.png`,
        title: 'shot',
        mimetype: 'image/png',
        filetype: 'png',
        size: 1234,
        url_private: `https://files.slack.com/files-pri/T01ACME-F${k}/shot.png?t=xoxe-bench`,
      },
    ]
  }
  return m
}

function generate(size: number): void {
  const dir = dirOf(size)
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  const users = Array.from({ length: USERS }, (_, i) => ({
    id: uid(i),
    name: `user${i}`,
    real_name: `User ${i}`,
    deleted: i % 50 === 0,
    is_bot: i % 100 === 1,
    profile: { real_name: `User ${i}`, email: `user${i}@acme.example` },
    updated: T0S,
  }))
  writeFileSync(join(dir, 'users.json'), JSON.stringify(users))
  const channels = Array.from({ length: CHANNELS }, (_, c) => ({
    id: `C${String(c).padStart(8, '0')}`,
    name: `channel-${c}`,
    created: T0S - 86_400,
    creator: uid(c),
    is_archived: false,
    members: Array.from({ length: 30 }, (_, j) => uid((c * 31 + j) % USERS)),
    purpose: { value: `Channel ${c}` },
  }))
  writeFileSync(join(dir, 'channels.json'), JSON.stringify(channels))
  const perChannel = Math.ceil(size / CHANNELS)
  let k = 0
  for (let c = 0; c < CHANNELS && k < size; c++) {
    const folder = join(dir, `channel-${c}`)
    mkdirSync(folder)
    for (let day = 0; day * PER_DAY < perChannel && k < size; day++) {
      const list = []
      for (let n = 0; n < PER_DAY && day * PER_DAY + n < perChannel && k < size; n++) {
        list.push(message(k++, day, n, c))
      }
      writeFileSync(join(folder, `${new Date((T0S + day * 86_400) * 1000).toISOString().slice(0, 10)}.json`), JSON.stringify(list, null, 4))
    }
  }
  writeFileSync(join(dir, '.complete'), String(k))
}

function rawParse(size: number): RawRead {
  const dir = dirOf(size)
  const started = performance.now()
  let rows = 0
  let bytes = 0
  for (const folder of readdirSync(dir, { withFileTypes: true })) {
    if (!folder.isDirectory()) {
      continue
    }
    for (const day of readdirSync(join(dir, folder.name))) {
      const text = readFileSync(join(dir, folder.name, day))
      bytes += text.length
      rows += (JSON.parse(text.toString('utf8')) as unknown[]).length
    }
  }
  return { rows, bytes, ms: performance.now() - started }
}

const slack: ConnectorBenchSystem = {
  label: 'Slack export (unpacked folder)',
  rawName: 'JSON.parse of the export files',
  prepare: async (size, regenerate) => {
    if (regenerate || !existsSync(join(dirOf(size), '.complete'))) {
      generate(size)
    }
  },
  raw: async (size) => rawParse(size),
  // The top-level files and every conversation folder's day files (warmFiles reads a folder one level deep).
  warm: (size) => warmFiles(readdirSync(dirOf(size)).map((name) => join(dirOf(size), name))),
  sourceConfig: (size, pageSize) => ({ connector: 'slack-export', path: dirOf(size), pageSize }),
}
export default slack
