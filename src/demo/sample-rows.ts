/**
 * The demo's sample database read back as plain rows, so the same history can also be written in a
 * hosted service's export layout (sample-sendbird.ts, sample-stream-chat.ts): one sample, the same
 * users, rooms, members, posts and reactions whichever source the demo reads.
 */
import { DatabaseSync } from 'node:sqlite'

export interface SampleAccount {
  readonly id: string
  readonly login: string
  readonly name: string | null
  readonly photo: string | null
  readonly joined: number | null
  readonly seen: number | null
  readonly disabled: number | null
  readonly bot: boolean
}

export interface SampleRoom {
  readonly id: string
  readonly title: string | null
  readonly visibility: 'public' | 'private' | 'group-dm'
  readonly topic: string | null
  readonly creator: string | null
  readonly created: number | null
  readonly members: readonly { readonly user: string; readonly role: string; readonly since: number | null }[]
}

export interface SamplePost {
  readonly id: string
  readonly author: string
  readonly room: string | null
  readonly dmTo: string | null
  readonly body: string | null
  /** Epoch ms, or the text a planted bad row holds instead. */
  readonly posted: number | string
  readonly edited: number | null
  readonly deleted: number | null
  readonly replyTo: string | null
  readonly system: boolean
  /** The files column as written: a JSON array of `{url, name, mime_type, size}`, or broken JSON (a planted row). */
  readonly files: string | null
  readonly mentioned: readonly string[]
  readonly reactions: readonly { readonly user: string; readonly emoji: string; readonly at: number }[]
}

export interface SampleRows {
  readonly accounts: readonly SampleAccount[]
  /** Rooms with their members; memberships of rooms that do not exist are left out (an export cannot hold them). */
  readonly rooms: readonly SampleRoom[]
  /** In time order (planted rows last). */
  readonly posts: readonly SamplePost[]
}

/** A sample written in a hosted service's export layout. */
export interface SampleExport {
  /** The config's `source:` block that reads it. */
  readonly source: Record<string, unknown>
  /** The legacy ids the demo expects quarantined. */
  readonly planted: { readonly users: readonly string[]; readonly messages: readonly string[] }
  /** What was written, for the demo's first line. */
  readonly describe: string
}

type Row = Record<string, string | number | null>

export function readSampleRows(path: string): SampleRows {
  const db = new DatabaseSync(path, { readOnly: true })
  try {
    const accounts = (db.prepare('SELECT * FROM accounts ORDER BY rowid').all() as Row[]).map((a) => ({
      id: String(a.account_id),
      login: String(a.login),
      name: a.full_name as string | null,
      photo: a.photo_url as string | null,
      joined: a.joined_ms as number | null,
      seen: a.seen_ms as number | null,
      disabled: a.disabled_ms as number | null,
      bot: a.kind === 'bot',
    }))
    const membersOf = new Map<string, { user: string; role: string; since: number | null }[]>()
    for (const m of db.prepare('SELECT * FROM room_members ORDER BY rowid').all() as Row[]) {
      const list = membersOf.get(String(m.room_id)) ?? []
      list.push({ user: String(m.account_id), role: String(m.role), since: m.since_ms as number | null })
      membersOf.set(String(m.room_id), list)
    }
    const rooms = (db.prepare('SELECT * FROM rooms ORDER BY rowid').all() as Row[]).map((r) => ({
      id: String(r.room_id),
      title: r.title as string | null,
      visibility: r.visibility as SampleRoom['visibility'],
      topic: r.topic as string | null,
      creator: r.creator as string | null,
      created: r.created_ms as number | null,
      members: membersOf.get(String(r.room_id)) ?? [],
    }))
    const reactionsOf = new Map<string, { user: string; emoji: string; at: number }[]>()
    for (const r of db.prepare('SELECT * FROM post_reactions ORDER BY rowid').all() as Row[]) {
      const list = reactionsOf.get(String(r.post_id)) ?? []
      list.push({ user: String(r.account_id), emoji: String(r.emoji), at: Number(r.at_ms) })
      reactionsOf.set(String(r.post_id), list)
    }
    const posts = (db.prepare('SELECT * FROM posts ORDER BY rowid').all() as Row[]).map((p) => ({
      id: String(p.post_id),
      author: String(p.author),
      room: p.room_id as string | null,
      dmTo: p.dm_to as string | null,
      body: p.body as string | null,
      posted: p.posted_ms as number | string,
      edited: p.edited_ms as number | null,
      deleted: p.deleted_ms as number | null,
      replyTo: p.reply_to as string | null,
      system: String(p.kind).startsWith('system:'),
      files: p.files as string | null,
      mentioned: p.mentioned === null ? [] : (JSON.parse(String(p.mentioned)) as string[]),
      reactions: reactionsOf.get(String(p.post_id)) ?? [],
    }))
    return { accounts, rooms, posts }
  } finally {
    db.close()
  }
}

/** A post's files, or undefined when the column is empty or not readable JSON (the planted row keeps it broken its own way). */
export function postFiles(p: SamplePost): { url: string; name: string; mime_type: string; size: number }[] | undefined {
  if (p.files === null) {
    return undefined
  }
  try {
    return JSON.parse(p.files) as { url: string; name: string; mime_type: string; size: number }[]
  } catch {
    return undefined
  }
}

/** The two people of a direct conversation, in a stable order. */
export const pairOf = (p: SamplePost): readonly [string, string] => [p.author, p.dmTo ?? p.author].sort() as [string, string]
