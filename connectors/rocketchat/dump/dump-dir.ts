/**
 * The `mongodump` directory of a Rocket.Chat database: the four collection files the connector
 * reads, checked when the source is opened, and the two lookups built from them once per session
 * (one scan each, held in memory: they grow with users and rooms, never with messages):
 * username → user id (`users.bson`; reactions and old direct rooms name users by username) and
 * room id → {@link RoomKind} (`rocketchat_room.bson`; subscriptions and messages need their room's type).
 */
import { lstat, stat } from 'node:fs/promises'
import { join, resolve } from 'node:path'

import { ChatferryError } from '../../../src/errors.ts'
import type { EpochMs } from '../../../src/model/records.ts'
import { type RoomKind, roomKind } from '../entities/room-kind.ts'
import type { Doc } from '../entities/values.ts'
import { readDumpDocuments } from './bson-file.ts'

export const COLLECTIONS = {
  users: 'users',
  rooms: 'rocketchat_room',
  subscriptions: 'rocketchat_subscription',
  messages: 'rocketchat_message',
} as const

export type DumpFiles = { readonly [K in keyof typeof COLLECTIONS]: string }

/**
 * The collection files under `path`: SOURCE_UNAVAILABLE when the directory cannot be reached,
 * SOURCE_INVALID naming every missing file (or one that is a symbolic link: a dump is read from
 * its own files only). Returns their newest mtime too (the dump's time).
 */
export async function openDumpDir(path: string): Promise<{ files: DumpFiles; writtenAt: EpochMs }> {
  const dir = resolve(path)
  const isDir = await stat(dir).then(
    (s) => s.isDirectory(),
    () => false,
  )
  if (!isDir) {
    throw new ChatferryError(
      'SOURCE_UNAVAILABLE',
      `source.path ${dir}: no such directory (or not readable): expected a Rocket.Chat mongodump's dump/<db>/`,
    )
  }
  const files = Object.fromEntries(Object.entries(COLLECTIONS).map(([k, c]) => [k, join(dir, `${c}.bson`)])) as DumpFiles
  const missing: string[] = []
  let writtenAt = 0
  for (const file of Object.values(files)) {
    try {
      const s = await lstat(file)
      if (s.isSymbolicLink()) {
        missing.push(`${file} (a symbolic link, never followed: copy the file itself into the dump)`)
      } else if (!s.isFile()) {
        missing.push(`${file} (not a file)`)
      }
      writtenAt = Math.max(writtenAt, s.mtimeMs)
    } catch {
      const gz = await stat(`${file}.gz`).then(
        () => true,
        () => false,
      )
      missing.push(gz ? `${file} (only ${file}.gz: a --gzip dump; gunzip the .bson.gz files first)` : file)
    }
  }
  if (missing.length > 0) {
    throw new ChatferryError(
      'SOURCE_INVALID',
      `source.path ${dir} is not the database directory of a Rocket.Chat mongodump (dump/<db>/): missing or unusable ${missing.join(', ')}`,
    )
  }
  return { files, writtenAt: Math.floor(writtenAt) }
}

export interface DumpLookups {
  readonly idOfUsername: (username: string) => string | undefined
  readonly roomOf: (rid: string) => RoomKind | undefined
}

/** Builds the username and room lookups (two scans); damaged or id-less documents are left out. */
export async function buildLookups(files: DumpFiles, signal?: AbortSignal): Promise<DumpLookups> {
  const usernames = new Map<string, string>()
  for await (const batch of readDumpDocuments(files.users, undefined, signal)) {
    for (const { doc: u } of batch as { doc?: Doc }[]) {
      if (u !== undefined && typeof u._id === 'string' && typeof u.username === 'string' && u.username !== '') {
        usernames.set(u.username, u._id)
      }
    }
  }
  // Usernames are unique regardless of case in Rocket.Chat; an exact match first, then any case.
  const lower = new Map<string, string>()
  for (const [name, id] of usernames) {
    if (!lower.has(name.toLowerCase())) {
      lower.set(name.toLowerCase(), id)
    }
  }
  const idOfUsername = (name: string) => usernames.get(name) ?? lower.get(name.toLowerCase())
  const rooms = new Map<string, RoomKind>()
  for await (const batch of readDumpDocuments(files.rooms, undefined, signal)) {
    for (const { doc: r } of batch as { doc?: Doc }[]) {
      if (r !== undefined && typeof r._id === 'string') {
        rooms.set(r._id, roomKind(r, idOfUsername))
      }
    }
  }
  return { idOfUsername, roomOf: (rid) => rooms.get(rid) }
}
