/**
 * The demo's legacy database: an in-house chat schema nobody else has ("Acme Chat"), in an embedded
 * SQLite file, with realistic data and the awkward parts a real history has — threads, edits,
 * deletions, reactions, mentions, attachments, system messages, direct and group conversations,
 * bots, deactivated users, history older than the platform keeps, and a few broken rows.
 *
 * Deterministic: the same seed gives the same database, so the demo's counts are reproducible.
 */
import { DatabaseSync } from 'node:sqlite'

import { seededRandom } from '../lib.ts'

export interface SampleSize {
  readonly users: number
  readonly channels: number
  readonly groupDms: number
  readonly groupMessages: number
  readonly directMessages: number
}

export const DEMO_SIZE: SampleSize = { users: 300, channels: 36, groupDms: 6, groupMessages: 24_000, directMessages: 6_000 }

/** The broken rows the demo plants, so it can check each one is quarantined with its reason. */
export const PLANTED_BAD_ROWS = {
  users: ['u-broken-name'],
  members: [],
  messages: ['m-bad-time', 'm-bad-json'],
} as const

const DAY = 86_400_000

const FIRST = [
  'Ada',
  'Grace',
  'Linus',
  'Margaret',
  'Ken',
  'Barbara',
  'Dennis',
  'Frances',
  'Edsger',
  'Radia',
  'Tim',
  'Hedy',
  'Alan',
  'Joan',
  'Niklaus',
  'Sophie',
  'José',
  'Zoë',
  'Björn',
  'Ayşe',
  'Chen',
  'Priya',
]
const LAST = [
  'Lovelace',
  'Hopper',
  'Torvalds',
  'Hamilton',
  'Thompson',
  'Liskov',
  'Ritchie',
  'Allen',
  'Dijkstra',
  'Perlman',
  'Berners-Lee',
  'Lamarr',
  'Turing',
  'Clarke',
  'Wirth',
  'Wilson',
  'Núñez',
  'Müller',
  'Øberg',
  'Yılmaz',
  'Wei',
  'Patel',
]
const TOPICS = [
  'release',
  'incident',
  'design',
  'hiring',
  'roadmap',
  'budget',
  'oncall',
  'security',
  'customers',
  'infra',
  'mobile',
  'web',
  'data',
  'support',
  'sales',
  'legal',
  'random',
  'announcements',
]
const WORDS =
  'the deploy is green again can someone review my change we should ship this friday please check the dashboard numbers look off after the migration thanks for the quick fix lunch is on me today the build failed on main again meeting moved to three let us pair on this tomorrow 🎉 looks good to me'.split(
    ' ',
  )
const EMOJI = ['👍', '🎉', '❤️', '😂', '👀', '🚀', '+1']

export interface SampleDatabase {
  readonly path: string
  /** Rows per table, as written. */
  readonly rows: { users: number; rooms: number; members: number; posts: number }
}

/** A post's `files` column: one PDF at the example host, or at `base` with its size in the path. */
function sampleFile(id: string | number, bytes: number, base: string | undefined): string {
  const url = base === undefined ? `https://files.acme.example/${id}/report.pdf` : `${base}/${id}/${bytes}/report.pdf`
  return JSON.stringify([{ url, name: 'report.pdf', mime_type: 'application/pdf', extension: 'pdf', size: bytes }])
}

/**
 * Writes the sample database to `path` (which must not exist yet). `fileBaseUrl`: where its posts'
 * files are served (the demo's own legacy file host, `<base>/<post>/<size>/report.pdf`); absent,
 * they point at an example host.
 */
export function createSampleLegacyDatabase(path: string, now: number, size: SampleSize = DEMO_SIZE, seed = 42, fileBaseUrl?: string): SampleDatabase {
  const rnd = seededRandom(seed)
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rnd() * list.length)] as T
  const db = new DatabaseSync(path)
  try {
    db.exec(`
      PRAGMA journal_mode = WAL;
      CREATE TABLE accounts (
        account_id TEXT PRIMARY KEY, login TEXT NOT NULL, full_name TEXT, photo_url TEXT,
        joined_ms INTEGER, seen_ms INTEGER, disabled_ms INTEGER, kind TEXT NOT NULL DEFAULT 'person', changed_ms INTEGER
      );
      CREATE TABLE rooms (
        room_id TEXT PRIMARY KEY, title TEXT, visibility TEXT NOT NULL, topic TEXT, creator TEXT,
        created_ms INTEGER, archived_ms INTEGER, changed_ms INTEGER
      );
      CREATE TABLE room_members (
        room_id TEXT NOT NULL, account_id TEXT NOT NULL, role TEXT NOT NULL, banned INTEGER NOT NULL DEFAULT 0, since_ms INTEGER,
        PRIMARY KEY (room_id, account_id)
      );
      CREATE TABLE posts (
        post_id TEXT PRIMARY KEY, author TEXT NOT NULL, room_id TEXT, dm_to TEXT, body TEXT,
        posted_ms, edited_ms INTEGER, deleted_ms INTEGER, reply_to TEXT, kind TEXT NOT NULL DEFAULT 'post',
        files TEXT, mentioned TEXT
      );
      CREATE TABLE post_reactions (post_id TEXT NOT NULL, account_id TEXT NOT NULL, emoji TEXT NOT NULL, at_ms INTEGER NOT NULL);
      CREATE INDEX posts_time ON posts (posted_ms, post_id);
      CREATE INDEX post_reactions_post ON post_reactions (post_id);
    `)

    // ── users ──
    const users: { id: string; login: string; joined: number }[] = []
    const insertUser = db.prepare('INSERT INTO accounts VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)')
    db.exec('BEGIN')
    for (let i = 0; i < size.users; i++) {
      const first = pick(FIRST)
      const last = pick(LAST)
      const login = `${first}.${last}${i}`
        .toLowerCase()
        .normalize('NFD')
        .replace(/[^a-z0-9.]/g, '')
      // Legacy ids with capitals and dots: the id policy must turn them into platform ids.
      const id = i % 7 === 0 ? `U.${1000 + i}` : `u-${1000 + i}`
      const joined = now - 700 * DAY + Math.floor(rnd() * 300 * DAY)
      const bot = i % 50 === 49
      const disabled = !bot && i % 40 === 39 ? now - Math.floor(rnd() * 30 * DAY) : null
      insertUser.run(
        id,
        login,
        bot ? `${pick(TOPICS)} bot` : `${first} ${last}`,
        i % 3 === 0 ? `https://files.acme.example/avatars/${id}.png` : null,
        joined,
        now - Math.floor(rnd() * 20 * DAY),
        disabled,
        bot ? 'bot' : 'person',
        joined,
      )
      users.push({ id, login, joined })
    }
    // A row the mapping cannot take: no name at all.
    insertUser.run(PLANTED_BAD_ROWS.users[0], '', null, null, now - 100 * DAY, null, null, 'person', now - 100 * DAY)
    db.exec('COMMIT')

    // ── rooms and members ──
    const insertRoom = db.prepare('INSERT INTO rooms VALUES (?, ?, ?, ?, ?, ?, ?, ?)')
    const insertMember = db.prepare('INSERT INTO room_members VALUES (?, ?, ?, ?, ?)')
    const rooms: { id: string; members: string[]; created: number }[] = []
    let memberRows = 0
    db.exec('BEGIN')
    for (let r = 0; r < size.channels + size.groupDms; r++) {
      const groupDm = r >= size.channels
      const id = groupDm ? `gdm-${r}` : `room-${r}`
      const created = now - 420 * DAY + Math.floor(rnd() * 60 * DAY)
      const visibility = groupDm ? 'group-dm' : r % 4 === 3 ? 'private' : 'public'
      const creator = pick(users).id
      const title = groupDm ? null : `${TOPICS[r % TOPICS.length]}${r >= TOPICS.length ? `-${r}` : ''}`
      insertRoom.run(id, title, visibility, groupDm ? null : `All about ${title}`, creator, created, r === 5 ? now - 10 * DAY : null, created)
      const count = groupDm ? 3 + Math.floor(rnd() * 4) : 8 + Math.floor(rnd() * 60)
      const members = new Set<string>([creator])
      while (members.size < Math.min(count, users.length)) {
        members.add(pick(users).id)
      }
      for (const uid of members) {
        // Some legacy join times predate the room (imported from an older system): the joinedAt policy clamps them.
        const since = rnd() < 0.05 ? created - DAY : created + Math.floor(rnd() * 200 * DAY)
        insertMember.run(id, uid, uid === creator ? 'owner' : rnd() < 0.05 ? 'moderator' : 'member', rnd() < 0.01 ? 1 : 0, since)
        memberRows++
      }
      rooms.push({ id, members: [...members], created })
    }
    // A membership of a room that does not exist.
    insertMember.run('room-gone', users[0]?.id ?? 'u-1000', 'member', 0, now - 50 * DAY)
    memberRows++
    db.exec('COMMIT')

    // ── posts ──
    const insertPost = db.prepare('INSERT INTO posts VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)')
    const insertReaction = db.prepare('INSERT INTO post_reactions VALUES (?, ?, ?, ?)')
    const total = size.groupMessages + size.directMessages
    const recentByRoom = new Map<string, string[]>()
    db.exec('BEGIN')
    for (let i = 0; i < total; i++) {
      const id = `m-${String(i).padStart(6, '0')}`
      // Most history is recent and written in order (a reply comes after its parent); 2% is older
      // than the platform's 6-month retention window.
      const old = i % 50 === 0
      const step = (170 * DAY) / total
      const posted = old ? now - 200 * DAY - Math.floor(rnd() * 100 * DAY) : now - 170 * DAY + Math.floor(i * step + rnd() * step)
      const direct = i >= size.groupMessages
      let room: string | null = null
      let dmTo: string | null = null
      let author: string
      if (direct) {
        author = pick(users).id
        dmTo = rnd() < 0.01 ? author : pick(users).id // self-DMs exist too
      } else {
        const r = pick(rooms)
        room = r.id
        author = pick(r.members)
      }
      const words = Array.from({ length: 3 + Math.floor(rnd() * 14) }, () => pick(WORDS))
      const mentioned: string[] = []
      if (rnd() < 0.08) {
        const who = pick(users)
        words.splice(1, 0, `@${who.login}`)
        mentioned.push(who.id)
      }
      let body: string | null = words.join(' ')
      let kind = 'post'
      if (!direct && rnd() < 0.02) {
        kind = 'system:join'
        body = `${author} joined the room`
      }
      const key = room ?? `dm:${[author, dmTo].sort().join(':')}`
      const recent = recentByRoom.get(key) ?? []
      const replyTo = !old && kind === 'post' && recent.length > 0 && rnd() < 0.12 ? pick(recent) : null
      const files = kind === 'post' && rnd() < 0.03 ? sampleFile(id, 1000 + Math.floor(rnd() * 90_000), fileBaseUrl) : null
      if (files !== null && rnd() < 0.5) {
        body = null
      } // a file without a caption
      const edited = kind === 'post' && rnd() < 0.05 ? posted + Math.floor(rnd() * DAY) : null
      const deleted = kind === 'post' && rnd() < 0.02 ? posted + Math.floor(rnd() * DAY) : null
      insertPost.run(id, author, room, dmTo, body, posted, edited, deleted, replyTo, kind, files, mentioned.length ? JSON.stringify(mentioned) : null)
      if (kind === 'post' && rnd() < 0.1) {
        const reactors = new Set<string>()
        for (let k = 0; k < 1 + Math.floor(rnd() * 3); k++) {
          reactors.add(pick(users).id)
        }
        for (const who of reactors) {
          insertReaction.run(id, who, pick(EMOJI), posted + 60_000)
        }
      }
      if (!old) {
        recent.push(id)
      }
      if (recent.length > 20) {
        recent.shift()
      }
      recentByRoom.set(key, recent)
    }
    // Rows the connector cannot read: a time that is not a time, and broken JSON.
    insertPost.run(
      PLANTED_BAD_ROWS.messages[0],
      users[1]?.id ?? 'u-1001',
      rooms[0]?.id ?? null,
      null,
      'hello',
      'yesterday-ish',
      null,
      null,
      null,
      'post',
      null,
      null,
    )
    insertPost.run(
      PLANTED_BAD_ROWS.messages[1],
      users[2]?.id ?? 'u-1002',
      rooms[0]?.id ?? null,
      null,
      'see attached',
      now - 3 * DAY,
      null,
      null,
      null,
      'post',
      '[{"url": "https://files.acme.example/x.png",',
      null,
    )
    db.exec('COMMIT')
    return { path, rows: { users: size.users + 1, rooms: rooms.length, members: memberRows, posts: total + 2 } }
  } finally {
    db.close()
  }
}

/**
 * The generic-sql connector's queries for this schema: one plain SELECT per entity, returning the
 * canonical columns (see connectors/generic-sql/README.md). This is what a user writes for their
 * own in-house database.
 */
export const SAMPLE_QUERIES = {
  users: `SELECT account_id AS id, COALESCE(full_name, '') AS name, login AS username, photo_url AS avatar,
            joined_ms AS created_at, seen_ms AS last_active_at, disabled_ms AS deactivated_at,
            CASE kind WHEN 'bot' THEN 1 ELSE 0 END AS is_bot, changed_ms AS updated_at
          FROM accounts`,
  groups: `SELECT room_id AS id, COALESCE(title, 'group conversation') AS name,
             CASE visibility WHEN 'public' THEN 'public' ELSE 'private' END AS type,
             topic AS description, creator AS owner_id, created_ms AS created_at, archived_ms AS archived_at, changed_ms AS updated_at
           FROM rooms`,
  members: `SELECT room_id AS group_id, account_id AS user_id,
              CASE role WHEN 'owner' THEN 'admin' WHEN 'moderator' THEN 'moderator' ELSE 'participant' END AS scope,
              banned, since_ms AS joined_at
            FROM room_members`,
  messages: `SELECT p.post_id AS id, p.author AS sender_id,
               CASE WHEN p.room_id IS NULL THEN 'user' ELSE 'group' END AS receiver_type,
               COALESCE(p.room_id, p.dm_to) AS receiver_id,
               CASE WHEN p.files IS NOT NULL AND p.body IS NULL THEN 'file' ELSE 'text' END AS type,
               p.body AS text, p.files AS attachments, p.posted_ms AS sent_at, p.edited_ms AS edited_at,
               p.deleted_ms AS deleted_at, p.reply_to AS parent_id, p.mentioned AS mentions,
               CASE WHEN p.kind LIKE 'system:%' THEN substr(p.kind, 8) END AS system_kind,
               (SELECT json_group_array(json_object('emoji', r.emoji, 'user_id', r.account_id, 'at', r.at_ms))
                  FROM post_reactions r WHERE r.post_id = p.post_id) AS reactions
             FROM posts p`,
} as const
