/**
 * A tenant's legacy chat history for the fleet tests and the fleet benchmark: an in-house schema
 * on SQLite (generic-sql), one file per tenant, with every id prefixed by the tenant so the apps'
 * contents can be told apart; and the generic-sql source block that reads it.
 */
import { DatabaseSync } from 'node:sqlite'

export interface TenantHistory {
  readonly users: number
  readonly groups: number
  /** Members per group (the first `membersPerGroup` users). */
  readonly membersPerGroup: number
  readonly messages: number
}

const DAY = 86_400_000

/** The target keys a tenant's app must hold after its load: uids, guids, `<guid>_member_<uid>`, muids. */
export function expectedKeys(tenant: string, h: TenantHistory): string[] {
  const users = Array.from({ length: h.users }, (_, i) => `${tenant}-u${i}`)
  const groups = Array.from({ length: h.groups }, (_, i) => `${tenant}-g${i}`)
  return [
    ...users,
    ...groups,
    ...groups.flatMap((g) => users.slice(0, h.membersPerGroup).map((u) => `${g}_member_${u}`)),
    ...Array.from({ length: h.messages }, (_, i) => `${tenant}-${i + 1}`),
  ]
}

/** Writes the tenant's history into a new SQLite file. */
export function writeTenantLegacy(file: string, tenant: string, h: TenantHistory, now = Date.now()): void {
  const db = new DatabaseSync(file)
  db.exec(`
    CREATE TABLE people (id TEXT PRIMARY KEY, name TEXT, changed INTEGER);
    CREATE TABLE rooms (id TEXT PRIMARY KEY, title TEXT, kind TEXT, changed INTEGER);
    CREATE TABLE room_people (room TEXT, person TEXT, role TEXT, changed INTEGER, PRIMARY KEY (room, person));
    CREATE TABLE lines (id INTEGER PRIMARY KEY, author TEXT, room TEXT, body TEXT, posted INTEGER, changed INTEGER);
    CREATE INDEX lines_posted ON lines (posted, id);`)
  const t = now - 10 * DAY
  const users = Array.from({ length: h.users }, (_, i) => `${tenant}-u${i}`)
  const groups = Array.from({ length: h.groups }, (_, i) => `${tenant}-g${i}`)
  db.exec('BEGIN')
  const person = db.prepare('INSERT INTO people VALUES (?, ?, ?)')
  users.forEach((u, i) => person.run(u, `${tenant} user ${i}`, t))
  const room = db.prepare('INSERT INTO rooms VALUES (?, ?, ?, ?)')
  const member = db.prepare('INSERT INTO room_people VALUES (?, ?, ?, ?)')
  for (const [i, g] of groups.entries()) {
    room.run(g, `${tenant} room ${i}`, 'public', t)
    for (const u of users.slice(0, h.membersPerGroup)) {
      member.run(g, u, 'participant', t)
    }
  }
  const line = db.prepare('INSERT INTO lines VALUES (?, ?, ?, ?, ?, ?)')
  for (let i = 1; i <= h.messages; i++) {
    const at = t + i * 1000
    line.run(i, users[i % Math.min(h.users, h.membersPerGroup)] ?? '', groups[i % h.groups] ?? '', `${tenant} line ${i}`, at, at)
  }
  db.exec('COMMIT')
  db.close()
}

/** The generic-sql source block that reads a file written by {@link writeTenantLegacy} (message ids prefixed by the tenant). */
export function tenantSource(file: string, tenant: string): Record<string, unknown> {
  return {
    connector: 'generic-sql',
    url: `sqlite:${file}`,
    entities: {
      users: { query: 'SELECT id, name, changed AS updated_at FROM people', timeFormat: 'epoch-ms' },
      groups: { query: 'SELECT id, title AS name, kind AS type, changed AS updated_at FROM rooms', timeFormat: 'epoch-ms' },
      members: { query: 'SELECT room AS group_id, person AS user_id, role AS scope, changed AS updated_at FROM room_people', timeFormat: 'epoch-ms' },
      messages: {
        query: `SELECT '${tenant}-' || id AS id, author AS sender_id, 'group' AS receiver_type, room AS receiver_id, body AS text, posted AS sent_at, changed AS updated_at FROM lines`,
        timeFormat: 'epoch-ms',
      },
    },
  }
}
