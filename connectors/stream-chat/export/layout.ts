/**
 * The directory of the history, read from the export before any read of it: its channels (and
 * which are one-to-one), their members, the v2 reaction lines by message, the counts of messages,
 * and the problems that belong to no message (bad lines, bad reactions, a broken file); with its
 * users too (Stream embeds them in members, messages and `created_by`; the v2 export also has user
 * lines) when asked, which means parsing every message that may embed one. Messages are only
 * counted here; reads stream them again. Memory: the directory (users, channels, members, v2
 * reactions), never the messages.
 * {@link ExportDirectory} reads it once per session, on first use, with users only when the
 * users are read: a resumed run or a read of messages alone passes over the messages unparsed.
 */
import type { JsonObject } from '../../../src/model/records.ts'
import { channelCid, DISTINCT_PREFIX } from '../entities/channels.ts'
import { FieldProblem, isObject, streamId, timeMs } from '../entities/fields.ts'
import { memberUserId } from '../entities/members.ts'
import type { ChannelTarget } from '../entities/messages.ts'
import { decodeReaction } from '../entities/messages.ts'
import { type EntityKind, type ExportEvent, exportEvents, type ExportFormat, type MessageParsing } from './events.ts'
import { ReactionIndex } from './reaction-index.ts'

/** A problem found by the layout pass: the entity it counts under, an id as far as known, the field. */
export interface LayoutProblem {
  readonly entity: 'users' | 'groups' | 'members' | 'messages'
  readonly legacyId: string
  readonly field: string
  readonly reason: string
  readonly instance: string
}

export interface ChannelEntry {
  readonly where: string
  readonly cid?: string
  readonly value?: JsonObject
  /** Why it is no group: its cid cannot be read, or an earlier entry had the same cid. */
  readonly problem?: { readonly field: string; readonly reason: string }
  readonly members: { readonly where: string; readonly value: JsonObject }[]
}

/** The directory without its users: all a read of channels, members or messages needs. */
export interface Directory {
  readonly channels: readonly ChannelEntry[]
  /** The channel each message of a cid goes to (first entries of a cid only). */
  readonly targets: ReadonlyMap<string, ChannelTarget>
  /** v1: the cid of each channel export (messages without `cid` belong to theirs). */
  readonly cidByExport: ReadonlyMap<number, string>
  /** v2 reaction lines by message id. */
  readonly reactions: ReactionIndex
  /** Problems that are no message of the file, yielded first by a read of their entity. */
  readonly problems: readonly LayoutProblem[]
  /** Message entities in the file (bad ones included). */
  readonly messageCount: number
}

/** The directory with its users. */
export interface Layout extends Directory {
  /** Users by id, as the object with the latest `updated_at` (first seen on a tie), in the order first seen. */
  readonly users: ReadonlyMap<string, { readonly where: string; readonly value: JsonObject }>
}

const ENTITY_OF: Record<EntityKind, LayoutProblem['entity']> = {
  channel: 'groups',
  member: 'members',
  message: 'messages',
  reaction: 'messages',
  user: 'users',
}

/** The cid a v2 member or message names (`cid`, or `channel_type` + `channel_id`). */
export function cidOf(o: JsonObject): string | undefined {
  if (typeof o.cid === 'string' && o.cid !== '') {
    return o.cid
  }
  return typeof o.channel_type === 'string' && typeof o.channel_id === 'string' ? `${o.channel_type}:${o.channel_id}` : undefined
}

/** Appends to the list at `key`, making it when absent. */
function pushTo<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key)
  if (list === undefined) {
    map.set(key, [value])
  } else {
    list.push(value)
  }
}

class LayoutBuilder {
  readonly channels: ChannelEntry[] = []
  readonly users = new Map<string, { where: string; value: JsonObject; updatedAt: number }>()
  readonly reactions = new ReactionIndex()
  readonly problems: LayoutProblem[] = []
  /** v1 members by channel export, v2 members by cid, until the channels are known. */
  readonly membersByExport = new Map<number, { where: string; value: JsonObject }[]>()
  readonly membersByCid = new Map<string, { where: string; value: JsonObject }[]>()
  readonly cidByExport = new Map<number, string>()
  messageCount = 0
  readonly withUsers: boolean

  constructor(withUsers: boolean) {
    this.withUsers = withUsers
  }

  /** Keeps a user object if it is newer than the one known (ids that cannot be read are the referrer's problem). */
  user(where: string, v: unknown): void {
    if (!this.withUsers || !isObject(v) || typeof v.id !== 'string' || v.id === '') {
      return
    }
    let updatedAt = 0
    try {
      updatedAt = timeMs('updated_at', v.updated_at) ?? 0
    } catch {
      // reported when the user is decoded
    }
    const known = this.users.get(v.id)
    if (known === undefined || updatedAt > known.updatedAt) {
      this.users.set(v.id, { where, value: v, updatedAt })
    }
  }

  add(e: ExportEvent): void {
    if (e.kind === 'unread') {
      this.messageCount++
      return
    }
    if (e.kind === 'broken') {
      this.problems.push({
        entity: 'messages',
        legacyId: e.where,
        field: 'file',
        reason: `the export cannot be read on: ${e.reason}`,
        instance: 'broken',
      })
      return
    }
    if (e.kind === 'bad') {
      if (e.entity === 'message') {
        this.messageCount++
        return
      }
      const entity = e.entity === undefined ? 'messages' : ENTITY_OF[e.entity]
      this.problems.push({ entity, legacyId: e.where, field: e.entity ?? 'line', reason: e.reason, instance: e.where })
      return
    }
    const { value: v, where } = e
    switch (e.entity) {
      case 'channel':
        return this.channel(e.exportIndex, where, v)
      case 'member': {
        this.user(where, v.user)
        const { user: _embedded, ...member } = v
        const cid = cidOf(v)
        if (cid !== undefined) {
          pushTo(this.membersByCid, cid, { where, value: member })
        } else if (e.exportIndex >= 0) {
          pushTo(this.membersByExport, e.exportIndex, { where, value: member })
        } else {
          this.attach(undefined, [{ where, value: member }], new Map())
        }
        return
      }
      case 'message':
        this.messageCount++
        this.user(where, v.user)
        for (const u of Array.isArray(v.mentioned_users) ? v.mentioned_users : []) {
          this.user(where, u)
        }
        return
      case 'reaction':
        return this.reaction(where, v)
      case 'user':
        if (typeof v.id !== 'string' || v.id === '') {
          this.problems.push({ entity: 'users', legacyId: '?', field: 'id', reason: 'id is missing', instance: where })
          return
        }
        this.user(where, v)
    }
  }

  channel(exportIndex: number, where: string, v: JsonObject): void {
    this.user(where, v.created_by)
    try {
      const cid = channelCid(v)
      if (exportIndex >= 0) {
        this.cidByExport.set(exportIndex, cid)
      }
      const twin = this.channels.some((c) => c.cid === cid && c.problem === undefined)
      const problem = twin ? { field: 'cid', reason: `the channel ${cid} is in the export twice; the first is read` } : undefined
      this.channels.push({ where, cid, value: v, members: [], ...(problem !== undefined ? { problem } : {}) })
    } catch (err) {
      if (!(err instanceof FieldProblem)) {
        throw err
      }
      this.channels.push({ where, problem: { field: err.field, reason: err.message }, members: [] })
    }
  }

  reaction(where: string, v: JsonObject): void {
    this.user(where, v.user)
    try {
      const messageId = streamId('message_id', v.message_id)
      const r = decodeReaction('reaction', v)
      this.reactions.add(messageId, r)
    } catch (err) {
      if (!(err instanceof FieldProblem)) {
        throw err
      }
      const id = typeof v.message_id === 'string' ? v.message_id : '?'
      this.problems.push({
        entity: 'messages',
        legacyId: id,
        field: err.field,
        reason: `a reaction of this message: ${err.message}`,
        instance: where,
      })
    }
  }

  /** Joins members to their channels and decides which channels are one-to-one. */
  finish(): Layout {
    const firstByCid = new Map<string, ChannelEntry>()
    for (const c of this.channels) {
      if (c.cid !== undefined && c.problem === undefined) {
        firstByCid.set(c.cid, c)
      }
    }
    for (const [exportIndex, members] of this.membersByExport) {
      const cid = this.cidByExport.get(exportIndex)
      this.attach(cid, members, firstByCid)
    }
    for (const [cid, members] of this.membersByCid) {
      this.attach(cid, members, firstByCid)
    }
    const targets = new Map<string, ChannelTarget>()
    for (const [cid, c] of firstByCid) {
      const pair = oneToOnePair(cid, c.members)
      targets.set(cid, pair !== undefined ? { cid, pair } : { cid })
    }
    const users = new Map([...this.users].map(([id, u]) => [id, { where: u.where, value: u.value }]))
    return {
      channels: this.channels,
      targets,
      cidByExport: this.cidByExport,
      users,
      reactions: this.reactions,
      problems: this.problems,
      messageCount: this.messageCount,
    }
  }

  attach(cid: string | undefined, members: { where: string; value: JsonObject }[], firstByCid: Map<string, ChannelEntry>): void {
    const channel = cid === undefined ? undefined : firstByCid.get(cid)
    if (channel === undefined) {
      for (const m of members) {
        this.problems.push({
          entity: 'members',
          legacyId: `${cid ?? '?'}/${String(m.value.user_id ?? '?')}`,
          field: 'channel_id',
          reason: `a member of ${cid ?? 'a channel'} that the export does not hold`,
          instance: m.where,
        })
      }
      return
    }
    channel.members.push(...members)
  }
}

/** The two members of a distinct channel of exactly two people, else undefined. */
function oneToOnePair(cid: string, members: readonly { readonly value: JsonObject }[]): readonly [string, string] | undefined {
  if (!cid.slice(cid.indexOf(':') + 1).startsWith(DISTINCT_PREFIX) || members.length !== 2) {
    return undefined
  }
  try {
    const [a, b] = members.map((m) => memberUserId(m.value)) as [string, string]
    return a !== b ? [a, b] : undefined
  } catch {
    return undefined
  }
}

/** Reads the export once for its directory, its users with it (the messages that may embed one parsed) or not (none parsed). */
async function readDirectory(path: string, format: ExportFormat, maxElementBytes: number, withUsers: boolean): Promise<Layout> {
  const b = new LayoutBuilder(withUsers)
  const parsing: MessageParsing = withUsers ? 'users' : 'none'
  for await (const batch of exportEvents(path, format, maxElementBytes, parsing)) {
    for (const e of batch) {
      b.add(e)
    }
  }
  return b.finish()
}

/**
 * Whether the export holds a channel, read only as far as its first (the messages before it
 * unparsed); when not, why the file could not be read on, if it broke.
 */
export async function firstChannel(path: string, format: ExportFormat, maxElementBytes: number): Promise<{ found: boolean; broken?: string }> {
  for await (const batch of exportEvents(path, format, maxElementBytes, 'none')) {
    for (const e of batch) {
      if (e.kind === 'entity' && e.entity === 'channel') {
        return { found: true }
      }
      if (e.kind === 'broken') {
        return { found: false, broken: e.reason }
      }
    }
  }
  return { found: false }
}

/**
 * A session's directory, read on first use and kept: {@link directory} without users unless they
 * were read already, {@link layout} with them (kept in its place: a later read of messages reuses it).
 */
export class ExportDirectory {
  readonly #path: string
  readonly #format: ExportFormat
  readonly #maxElementBytes: number
  #directory: Promise<Directory> | undefined
  #layout: Promise<Layout> | undefined

  constructor(path: string, format: ExportFormat, maxElementBytes: number) {
    this.#path = path
    this.#format = format
    this.#maxElementBytes = maxElementBytes
  }

  directory(): Promise<Directory> {
    if (this.#layout !== undefined) {
      return this.#layout
    }
    this.#directory ??= this.#read(false)
    return this.#directory
  }

  layout(): Promise<Layout> {
    if (this.#layout === undefined) {
      this.#layout = this.#read(true)
      this.#directory = undefined
    }
    return this.#layout
  }

  #read(withUsers: boolean): Promise<Layout> {
    const read = readDirectory(this.#path, this.#format, this.#maxElementBytes, withUsers)
    // A failed read is not kept: the next use reads again.
    read.catch(() => {
      if (this.#layout === read) {
        this.#layout = undefined
      }
      if (this.#directory === read) {
        this.#directory = undefined
      }
    })
    return read
  }
}
