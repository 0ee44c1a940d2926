/**
 * The entities of one Stream Chat channel export file, in file order, whatever its format:
 * - v1 (`json`): one JSON document — a channel export `{channel, members, messages}` or an array
 *   of them (one per exported channel), read with json-values.ts;
 * - v2 (`jsonl`): one entity per line, `{"type": "channel" | "member" | "message" | "reaction" |
 *   "user", "item": {…}}` (the layout of Stream's import files, which the v2 export shares).
 * Either may be gzip-compressed. Each entity is parsed alone; they come a chunk's worth at a time
 * (v2: at most a few hundred lines of a chunk), so memory is bounded by one chunk and one entity.
 *
 * A message is read whatever it holds: parsed, it is a message or a bad message (v1: a value of a
 * `messages` array; v2: a line that starts `{"type":"message",`, broken JSON or another `type`
 * further on included). So a directory pass, which only counts messages, can leave one unparsed
 * (`unread`, {@link MessageParsing}), and its counts and positions still agree with every other
 * read of the file.
 */
import { createReadStream } from 'node:fs'
import { open } from 'node:fs/promises'
import { createGunzip } from 'node:zlib'

import type { JsonObject } from '../../../src/model/records.ts'
import { isObject } from '../entities/fields.ts'
import { type JsonLine, jsonLineBatches } from './json-lines.ts'
import { type JsonPath, jsonValueBatches, type JsonValueItem } from './json-values.ts'

export const ENTITY_KINDS = ['channel', 'member', 'message', 'reaction', 'user'] as const
export type EntityKind = (typeof ENTITY_KINDS)[number]

export type ExportEvent =
  /** `where` names the entity in the file (`channel 2 messages[17]`, `line 12`); `exportIndex` is v1's channel export (-1 in v2). */
  | { readonly kind: 'entity'; readonly entity: EntityKind; readonly where: string; readonly exportIndex: number; readonly value: JsonObject }
  /**
   * An entity that cannot be read; `entity` is undefined when not even its kind is known (a bad
   * line); `field` is `line` for a message line that is not JSON (else the entity's kind is the field).
   */
  | { readonly kind: 'bad'; readonly entity: EntityKind | undefined; readonly where: string; readonly reason: string; readonly field?: 'line' }
  /** The file cannot be read on from here. */
  | { readonly kind: 'broken'; readonly where: string; readonly reason: string }
  /** A message left unparsed (only when asked, {@link MessageParsing}); parsed, it is a message or a bad message. */
  | { readonly kind: 'unread'; readonly entity: 'message'; readonly where: string }

export type ExportFormat = 'json' | 'jsonl'

/**
 * Which messages are parsed: `all` (a read); `users`, those that may embed a user object (v1: all
 * of them; v2: a line that names a `user` or `mentioned_users` object), for the users directory;
 * `none`, for a directory without message users (the channels, members and counts).
 */
export type MessageParsing = 'all' | 'users' | 'none'

/** The format a path's name says (`auto`), or the configured one. */
export function formatOf(path: string, configured: 'auto' | ExportFormat): ExportFormat {
  if (configured !== 'auto') {
    return configured
  }
  return /\.(jsonl|ndjson)(\.gz)?$/i.test(path) ? 'jsonl' : 'json'
}

/** The file's bytes, inflated when it is gzip (by its magic bytes, not its name). */
async function* bytesOf(path: string): AsyncGenerator<Buffer> {
  const fh = await open(path, 'r')
  const magic = Buffer.alloc(2)
  try {
    await fh.read(magic, 0, 2, 0)
  } finally {
    await fh.close()
  }
  // Node's 64 KiB reads: 1 MiB read buffers grew the allocator's heap by tens of MB over a long read.
  const raw = createReadStream(path)
  const stream = magic[0] === 0x1f && magic[1] === 0x8b ? raw.pipe(createGunzip()) : raw
  try {
    for await (const chunk of stream) {
      yield chunk as Buffer
    }
  } finally {
    raw.destroy()
    stream.destroy()
  }
}

/** Which v1 value a path names: `[i?] channel`, `[i?] members[n]`, `[i?] messages[n]` (asked once a value: no copies). */
function v1Want(path: JsonPath): EntityKind | undefined {
  const from = typeof path[0] === 'number' ? 1 : 0
  const key = path[from]
  if (path.length - from === 1) {
    return key === 'channel' ? 'channel' : undefined
  }
  if (path.length - from === 2 && typeof path[from + 1] === 'number') {
    return key === 'messages' ? 'message' : key === 'members' ? 'member' : undefined
  }
  return undefined
}

function v1Where(path: JsonPath): { where: string; exportIndex: number } {
  const exportIndex = typeof path[0] === 'number' ? path[0] : 0
  const rest = typeof path[0] === 'number' ? path.slice(1) : path
  const tail = rest.length === 2 ? `${rest[0]}[${rest[1]}]` : String(rest[0])
  return { where: `channel export ${exportIndex} ${tail}`, exportIndex }
}

function parseObject(text: string): JsonObject | string {
  let v: unknown
  try {
    v = JSON.parse(text)
  } catch (err) {
    return `not JSON: ${(err as Error).message}`
  }
  return isObject(v) ? v : 'not a JSON object'
}

const UNREAD_V1: ExportEvent = Object.freeze({ kind: 'unread', entity: 'message', where: 'a message of the export' })

function v1Event(item: JsonValueItem<EntityKind> & { kind: 'value' | 'bad' }): ExportEvent {
  const { where, exportIndex } = v1Where(item.path)
  const value = item.kind === 'value' ? parseObject(item.text) : item.reason
  return typeof value === 'string'
    ? { kind: 'bad', entity: item.tag, where, reason: value }
    : { kind: 'entity', entity: item.tag, where, exportIndex, value }
}

const isMessage = (tag: EntityKind) => tag === 'message'

async function* v1Events(path: string, maxElementBytes: number, parsing: MessageParsing): AsyncGenerator<ExportEvent[]> {
  const options = { maxDepth: 3, maxValueBytes: maxElementBytes, ...(parsing === 'none' ? { unread: isMessage } : {}) }
  for await (const batch of jsonValueBatches(bytesOf(path), v1Want, options)) {
    const out: ExportEvent[] = []
    for (const item of batch) {
      if (item.kind === 'broken') {
        out.push({ kind: 'broken', where: path, reason: item.reason })
        yield out
        return
      }
      // Nothing reads where an unread message is: its count is all it is for.
      out.push(item.kind === 'unread' ? UNREAD_V1 : v1Event(item))
    }
    yield out
  }
}

/** A line that is a message line by its start (see the header). */
const MESSAGE_LINE = /^\{\s*"type"\s*:\s*"message"\s*,/
/** A line that may embed a user object (`user`, `mentioned_users`): the layout parses it for its users. */
const USER_OBJECT = /"user"\s*:\s*\{|"mentioned_users"\s*:\s*\[\s*\{/

function v2Event(line: JsonLine, parsing: MessageParsing): ExportEvent {
  const where = `line ${line.line}`
  if (line.kind === 'bad') {
    return { kind: 'bad', entity: undefined, where, reason: line.reason }
  }
  const message = MESSAGE_LINE.test(line.text)
  if (message && (parsing === 'none' || (parsing === 'users' && !USER_OBJECT.test(line.text)))) {
    return { kind: 'unread', entity: 'message', where }
  }
  const o = parseObject(line.text)
  if (typeof o === 'string') {
    return message ? { kind: 'bad', entity: 'message', field: 'line', where, reason: o } : { kind: 'bad', entity: undefined, where, reason: o }
  }
  const entity = (ENTITY_KINDS as readonly unknown[]).includes(o.type) ? (o.type as EntityKind) : undefined
  if (message && entity !== 'message') {
    return { kind: 'bad', entity: 'message', where, reason: `a message line whose type is then ${JSON.stringify(o.type)?.slice(0, 40)}` }
  }
  if (entity === undefined) {
    return { kind: 'bad', entity: undefined, where, reason: `type ${JSON.stringify(o.type)?.slice(0, 40)} is not one of ${ENTITY_KINDS.join(', ')}` }
  }
  if (!isObject(o.item)) {
    return { kind: 'bad', entity, where, reason: 'item is not a JSON object' }
  }
  return { kind: 'entity', entity, where, exportIndex: -1, value: o.item }
}

/** Lines parsed per batch of a v2 export. */
const V2_BATCH = 256

async function* v2Events(path: string, maxElementBytes: number, parsing: MessageParsing): AsyncGenerator<ExportEvent[]> {
  for await (const lines of jsonLineBatches(bytesOf(path), maxElementBytes)) {
    // A chunk holds thousands of lines: parsed a few hundred at a time, they are taken before
    // the next are parsed, so few parsed values outlive a young-generation collection.
    for (let from = 0; from < lines.length; from += V2_BATCH) {
      yield lines.slice(from, from + V2_BATCH).map((line) => v2Event(line, parsing))
    }
  }
}

/**
 * Every entity of the export file at `path`, in file order, in batches (one per chunk read).
 * `parsing` other than `all` may leave messages `unread` (the directory passes).
 */
export function exportEvents(
  path: string,
  format: ExportFormat,
  maxElementBytes: number,
  parsing: MessageParsing = 'all',
): AsyncGenerator<ExportEvent[]> {
  return format === 'jsonl' ? v2Events(path, maxElementBytes, parsing) : v1Events(path, maxElementBytes, parsing)
}
