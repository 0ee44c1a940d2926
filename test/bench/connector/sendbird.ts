/**
 * Sendbird Data Export files (JSON, unpacked folders) for the connector benchmark, kept in
 * `<tmpdir>/cf-bench-sendbird/<size>/` and reused: 500 users, 40 group channels (and 40 one-to-one
 * channels), messages in files of 10,000 (the message resource's shape: text, file messages,
 * thread replies, edits, reactions, mentions, custom types, admin messages). Raw: `JSON.parse` of
 * every messages file, read whole, in the same process.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import type { ConnectorBenchSystem, RawRead } from './system.ts'
import { warmFiles } from './warm-files.ts'

const USERS = 500
const CHANNELS = 40
const PER_FILE = 10_000
const T0 = Date.UTC(2024, 0, 2)

const dirOf = (size: number) => join(tmpdir(), 'cf-bench-sendbird', String(size))
const uid = (i: number) => `user-${i}`
const url = (c: number) => (c < CHANNELS ? `sendbird_group_channel_${c}` : `sendbird_group_channel_dm_${c}`)

function message(k: number): Record<string, unknown> {
  const c = k % (2 * CHANNELS)
  const sender = c < CHANNELS ? uid(k % USERS) : uid(c % 2 === 0 ? c : c + 1)
  const created = T0 + k * 1000
  const m: Record<string, unknown> = {
    message_id: 1_000_000 + k,
    type: k % 97 === 0 ? 'ADMM' : k % 50 === 0 ? 'FILE' : 'MESG',
    custom_type: k % 11 === 0 ? 'note' : '',
    channel_url: url(c),
    channel_type: 'group',
    user: { user_id: sender, nickname: `User ${sender}`, profile_url: '' },
    mention_type: 'users',
    mentioned_users: k % 9 === 0 ? [{ user_id: uid((k * 7) % USERS) }] : [],
    is_removed: k % 101 === 0,
    message: k % 9 === 0 ? `ping @${uid((k * 7) % USERS)} about build ${k}` : `message ${k} in the usual chatter of a busy channel`,
    data: k % 11 === 0 ? '{"priority":"high"}' : '',
    created_at: created,
    updated_at: k % 13 === 0 ? created + 60_000 : 0,
    parent_message_id: k % 10 === 3 && k > 100 ? 1_000_000 + k - 80 : 0,
  }
  if (m.type === 'FILE') {
    m.file = { url: `https://file-us-1.sendbird.com/bench/${k}.png`, name: `shot-${k}.png`, type: 'image/png', size: 1234, data: '' }
  }
  if (k % 17 === 0) {
    m.reactions = [{ key: '👍', user_ids: [uid((k + 1) % USERS), uid((k + 2) % USERS)], updated_at: created + 5000 }]
  }
  return m
}

function generate(size: number): void {
  const dir = dirOf(size)
  rmSync(dir, { recursive: true, force: true })
  for (const d of ['users', 'channels', 'messages']) {
    mkdirSync(join(dir, d), { recursive: true })
  }
  const users = Array.from({ length: USERS }, (_, i) => ({
    user_id: uid(i),
    nickname: i % 10 === 0 ? '' : `User ${i}`,
    profile_url: '',
    is_active: i % 50 !== 0,
    last_seen_at: T0,
    created_at: T0 / 1000 - 86_400,
    metadata: i % 5 === 0 ? { team: `t${i % 7}` } : {},
  }))
  writeFileSync(join(dir, 'users', 'users.json'), JSON.stringify(users))
  const channels = Array.from({ length: 2 * CHANNELS }, (_, c) => ({
    channel_url: url(c),
    channel_type: 'group',
    name: c < CHANNELS ? `Channel ${c}` : '',
    is_public: c < CHANNELS && c % 2 === 0,
    is_super: false,
    is_distinct: c >= CHANNELS,
    member_count: c < CHANNELS ? 30 : 2,
    members:
      c < CHANNELS
        ? Array.from({ length: 30 }, (_, j) => ({ user_id: uid((c * 31 + j) % USERS), role: j === 0 ? 'operator' : '' }))
        : [{ user_id: uid(c % 2 === 0 ? c : c + 1) }, { user_id: uid(c % 2 === 0 ? c + 1 : c + 2) }],
    created_at: T0 / 1000 - 86_400,
    created_by: { user_id: uid(c) },
  }))
  writeFileSync(join(dir, 'channels', 'channels.json'), JSON.stringify(channels))
  for (let from = 0, n = 0; from < size; from += PER_FILE, n++) {
    const list = Array.from({ length: Math.min(PER_FILE, size - from) }, (_, i) => message(from + i))
    writeFileSync(join(dir, 'messages', `messages_${String(n).padStart(5, '0')}.json`), JSON.stringify(list, null, 2))
  }
  writeFileSync(join(dir, '.complete'), String(size))
}

function rawParse(size: number): RawRead {
  const dir = join(dirOf(size), 'messages')
  const started = performance.now()
  let rows = 0
  let bytes = 0
  for (const file of readdirSync(dir).sort()) {
    const text = readFileSync(join(dir, file))
    bytes += text.length
    rows += (JSON.parse(text.toString('utf8')) as unknown[]).length
  }
  return { rows, bytes, ms: performance.now() - started }
}

const sendbird: ConnectorBenchSystem = {
  label: 'Sendbird Data Export (JSON, unpacked folders)',
  rawName: 'JSON.parse of the messages files',
  prepare: async (size, regenerate) => {
    if (regenerate || !existsSync(join(dirOf(size), '.complete'))) {
      generate(size)
    }
  },
  raw: async (size) => rawParse(size),
  warm: (size) => warmFiles(['users', 'channels', 'messages'].map((d) => join(dirOf(size), d))),
  sourceConfig: (size, pageSize) => ({
    connector: 'sendbird',
    pageSize,
    export: { users: join(dirOf(size), 'users'), channels: join(dirOf(size), 'channels'), messages: join(dirOf(size), 'messages') },
  }),
}
export default sendbird
