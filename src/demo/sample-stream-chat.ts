/**
 * The demo's sample history written as a Stream Chat channel export, v2 (line-separated JSON: user,
 * channel, member, message and reaction lines), for `chatferry demo --source stream-chat-export`.
 * Public rooms are `livestream` channels, private rooms `team` channels (both read as their
 * groups), group DMs and direct messages distinct `messaging` channels of their members. The
 * planted bad rows become Stream's own kinds of bad row: a user and a message whose times are no
 * RFC 3339 times, a file attachment without a URL.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'

import { pairOf, postFiles, type SampleExport, type SamplePost, type SampleRows } from './sample-rows.ts'

const iso = (ms: number | null) => (ms === null ? undefined : new Date(ms).toISOString())
/** A distinct channel's id: Stream's `!members-` prefix and its members (ids kept to Stream's letters). */
const distinctId = (users: readonly string[]) => `!members-${users.map((u) => u.replace(/[^A-Za-z0-9_-]/g, '_')).join('-')}`

function message(p: SamplePost, cid: string): Record<string, unknown> {
  const files = postFiles(p)
  const broken = p.files !== null && files === undefined // the planted row: its file has no URL
  const [type, id] = [cid.slice(0, cid.indexOf(':')), cid.slice(cid.indexOf(':') + 1)]
  return {
    id: p.id,
    channel_type: type,
    channel_id: id,
    user: p.author,
    text: p.body ?? '',
    type: p.system ? 'system' : p.replyTo !== null ? 'reply' : 'regular',
    ...(p.replyTo !== null ? { parent_id: p.replyTo } : {}),
    attachments: broken
      ? [{ type: 'file', asset_url: 'see attached', title: 'x.png' }]
      : (files ?? []).map((f) => ({ type: 'file', asset_url: f.url, title: f.name, mime_type: f.mime_type, file_size: f.size })),
    mentioned_users: p.mentioned,
    created_at: typeof p.posted === 'string' ? p.posted : iso(p.posted),
    updated_at: typeof p.posted === 'string' ? p.posted : iso(p.deleted ?? p.edited ?? p.posted),
    ...(p.edited !== null ? { message_text_updated_at: iso(p.edited) } : {}),
    ...(p.deleted !== null ? { deleted_at: iso(p.deleted) } : {}),
  }
}

export function writeStreamChatExport(rows: SampleRows, dir: string): SampleExport {
  const lines: string[] = []
  const line = (type: string, item: Record<string, unknown>) => lines.push(JSON.stringify({ type, item }))
  const badUser = rows.accounts.find((a) => a.login === '')
  for (const a of rows.accounts) {
    line('user', {
      id: a.id,
      name: a.name ?? '',
      ...(a.photo !== null ? { image: a.photo } : {}),
      role: 'user',
      // The planted user (no name at all in the database): a sign-up time that is no time.
      created_at: a === badUser ? 'last spring' : iso(a.joined),
      updated_at: iso(a.joined),
      ...(a.seen !== null ? { last_active: iso(a.seen) } : {}),
      ...(a.disabled !== null ? { deactivated_at: iso(a.disabled) } : {}),
      login: a.login,
    })
  }
  const cidOf = new Map<string, string>()
  const channel = (cid: string, item: Record<string, unknown>, members: readonly { user: string; role: string; since: number | null }[]) => {
    const [type, id] = [cid.slice(0, cid.indexOf(':')), cid.slice(cid.indexOf(':') + 1)]
    line('channel', { id, type, ...item })
    for (const m of members) {
      line('member', { channel_type: type, channel_id: id, user_id: m.user, role: m.role, created_at: iso(m.since) })
    }
  }
  for (const r of rows.rooms) {
    const type = r.visibility === 'public' ? 'livestream' : r.visibility === 'private' ? 'team' : 'messaging'
    const cid = `${type}:${r.visibility === 'group-dm' ? distinctId(r.members.map((m) => m.user)) : r.id}`
    cidOf.set(r.id, cid)
    channel(cid, { name: r.title ?? '', created_by: r.creator, created_at: iso(r.created), updated_at: iso(r.created) }, r.members)
  }
  let direct = 0
  for (const p of rows.posts) {
    if (p.room === null && !cidOf.has(pairOf(p).join('\u0000'))) {
      const pair = pairOf(p)
      // A note to oneself is a distinct channel of one member: a private group of one.
      const members = pair[0] === pair[1] ? [pair[0]] : pair
      const cid = `messaging:${distinctId(members)}`
      cidOf.set(pair.join('\u0000'), cid)
      channel(
        cid,
        {},
        members.map((user) => ({ user, role: 'member', since: null })),
      )
      direct++
    }
  }
  let reactions = 0
  for (const p of rows.posts) {
    line('message', message(p, cidOf.get(p.room ?? pairOf(p).join('\u0000')) as string))
    for (const r of p.reactions) {
      line('reaction', { message_id: p.id, type: r.emoji, user_id: r.user, created_at: iso(r.at) })
      reactions++
    }
  }
  const path = join(dir, 'stream-chat-export.jsonl')
  writeFileSync(path, `${lines.join('\n')}\n`)
  const planted = rows.posts.filter((p) => typeof p.posted === 'string' || (p.files !== null && postFiles(p) === undefined))
  return {
    source: { connector: 'stream-chat', path },
    planted: { users: badUser === undefined ? [] : [badUser.id], messages: planted.map((p) => p.id) },
    describe: `${rows.accounts.length} users, ${rows.rooms.length + direct} channels (${direct} direct), ${rows.posts.length} messages, ${reactions} reactions as a Stream Chat export (v2, line-separated JSON)`,
  }
}
