/**
 * The demo's sample history written as a Sendbird Data Export (unpacked folders: `users/`,
 * `channels/`, `messages/` of JSON arrays, messages 10,000 a file), for `chatferry demo --source
 * sendbird-export`. Rooms are group channels (owners their operators), group DMs distinct private
 * channels, direct messages one-to-one channels of the two people; system posts are admin messages
 * (`ADMM`), posts with files file messages (`FILE`). The planted bad rows become Sendbird's own
 * kinds of bad row: a user and a message whose times are no times, a file message without a URL.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

import { pairOf, postFiles, type SampleExport, type SamplePost, type SampleRows } from './sample-rows.ts'

const PER_FILE = 10_000
const FIRST_MESSAGE_ID = 1_000_000

const directUrl = (pair: readonly [string, string]) => `sendbird_group_channel_dm_${pair[0]}_${pair[1]}`

function message(p: SamplePost, idOf: ReadonlyMap<string, number>): Record<string, unknown> {
  const files = postFiles(p)
  const file = files?.[0]
  const broken = p.files !== null && files === undefined // the planted row: its file is no file
  const m: Record<string, unknown> = {
    message_id: idOf.get(p.id),
    type: p.system ? 'ADMM' : file !== undefined || broken ? 'FILE' : 'MESG',
    custom_type: '',
    channel_url: p.room ?? directUrl(pairOf(p)),
    channel_type: 'group',
    message: p.body ?? '',
    data: '',
    created_at: p.posted,
    updated_at: p.deleted ?? p.edited ?? 0,
    is_removed: p.deleted !== null,
    parent_message_id: p.replyTo === null ? 0 : (idOf.get(p.replyTo) ?? 0),
    mention_type: 'users',
    mentioned_users: p.mentioned.map((user_id) => ({ user_id })),
  }
  if (!p.system) {
    m.user = { user_id: p.author }
  }
  if (file !== undefined) {
    m.file = { url: file.url, name: file.name, type: file.mime_type, size: file.size }
  } else if (broken) {
    m.file = { url: 'see attached', name: 'x.png', type: 'image/png', size: 0 }
  }
  const byEmoji = new Map<string, { user_ids: string[]; updated_at: number }>()
  for (const r of p.reactions) {
    const e = byEmoji.get(r.emoji) ?? { user_ids: [], updated_at: r.at }
    e.user_ids.push(r.user)
    e.updated_at = Math.max(e.updated_at, r.at)
    byEmoji.set(r.emoji, e)
  }
  if (byEmoji.size > 0) {
    m.reactions = [...byEmoji].map(([key, e]) => ({ key, ...e }))
  }
  return m
}

export function writeSendbirdExport(rows: SampleRows, dir: string): SampleExport {
  for (const d of ['users', 'channels', 'messages']) {
    mkdirSync(join(dir, d), { recursive: true })
  }
  const badUser = rows.accounts.find((a) => a.login === '')
  const users = rows.accounts.map((a) => ({
    user_id: a.id,
    nickname: a.name ?? '',
    profile_url: a.photo ?? '',
    is_active: a.disabled === null,
    last_seen_at: a.seen ?? 0,
    // The planted user (no name at all in the database): a sign-up time that is no time.
    created_at: a === badUser ? 'last spring' : (a.joined ?? 0),
    metadata: { login: a.login, ...(a.bot ? { kind: 'bot' } : {}) },
  }))
  writeFileSync(join(dir, 'users', 'users.json'), JSON.stringify(users))
  const pairs = new Map<string, readonly [string, string]>()
  for (const p of rows.posts) {
    if (p.room === null) {
      pairs.set(directUrl(pairOf(p)), pairOf(p))
    }
  }
  const channels = [
    ...rows.rooms.map((r) => ({
      channel_url: r.id,
      channel_type: 'group',
      name: r.title ?? '',
      custom_type: r.visibility === 'group-dm' ? 'group-dm' : '',
      is_public: r.visibility === 'public',
      is_distinct: r.visibility === 'group-dm',
      is_super: false,
      member_count: r.members.length,
      members: r.members.map((m) => ({ user_id: m.user, role: m.role === 'owner' ? 'operator' : '' })),
      created_at: r.created ?? 0,
      created_by: { user_id: r.creator ?? '' },
    })),
    ...[...pairs].map(([url, pair]) => ({
      channel_url: url,
      channel_type: 'group',
      name: '',
      is_public: false,
      is_distinct: true,
      is_super: false,
      member_count: 2,
      members: pair.map((user_id) => ({ user_id })),
      created_at: 0,
    })),
  ]
  writeFileSync(join(dir, 'channels', 'channels.json'), JSON.stringify(channels))
  const idOf = new Map(rows.posts.map((p, i) => [p.id, FIRST_MESSAGE_ID + i]))
  for (let from = 0, n = 0; from < rows.posts.length; from += PER_FILE, n++) {
    const list = rows.posts.slice(from, from + PER_FILE).map((p) => message(p, idOf))
    writeFileSync(join(dir, 'messages', `messages_${String(n).padStart(5, '0')}.json`), JSON.stringify(list))
  }
  const planted = rows.posts.filter((p) => typeof p.posted === 'string' || (p.files !== null && postFiles(p) === undefined))
  return {
    source: { connector: 'sendbird', export: { users: join(dir, 'users'), channels: join(dir, 'channels'), messages: join(dir, 'messages') } },
    planted: { users: badUser === undefined ? [] : [badUser.id], messages: planted.map((p) => String(idOf.get(p.id))) },
    describe: `${users.length} users, ${channels.length} channels (${pairs.size} one-to-one), ${rows.posts.length} messages as a Sendbird Data Export (JSON folders)`,
  }
}
