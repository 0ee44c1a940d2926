/**
 * Conversations that become groups: `channels.json` (public channels), `groups.json` (private
 * channels) and `mpims.json` (group DMs). `dms.json` (one-to-one DMs) is read by the layout only.
 */
import type { JsonObject, LegacyGroup } from '../../../src/model/records.ts'
import { FieldProblem, isObject, secondsMs, slackId, str } from './fields.ts'

/** The metadata files of group conversations, in the order they are read. */
export const GROUP_FILES = ['channels.json', 'groups.json', 'mpims.json'] as const
export type GroupFile = (typeof GROUP_FILES)[number]

export const KIND_OF_FILE = { 'channels.json': 'channel', 'groups.json': 'private', 'mpims.json': 'mpim' } as const

/**
 * A group DM's name from its Slack name `mpdm-alice--bob--carol-1`: `alice, bob, carol` (the
 * members' handles, as Slack shows it). Undefined when the name has another form.
 */
export function mpimDisplayName(name: string): string | undefined {
  const m = /^mpdm-(.+)-\d+$/.exec(name)
  if (m === null) {
    return undefined
  }
  const handles = (m[1] as string).split('--').filter((h) => h !== '')
  return handles.length > 0 ? handles.join(', ') : undefined
}

/**
 * @param archivedAt when an archived conversation was archived: its `channel_archive` message's time,
 *   else the export's time (Slack exports no archive time).
 */
export function decodeGroup(c: unknown, file: GroupFile, archivedAt: number): LegacyGroup {
  if (!isObject(c)) {
    throw new FieldProblem('channel', 'the entry is not a JSON object')
  }
  const id = slackId('id', c.id)
  const slackName = str(c.name)
  const kind = KIND_OF_FILE[file]
  const name = kind === 'mpim' && slackName !== undefined ? (mpimDisplayName(slackName) ?? slackName) : slackName
  if (name === undefined) {
    throw new FieldProblem('name', 'the conversation has no name')
  }
  const metadata: JsonObject = { kind }
  if (slackName !== undefined && slackName !== name) {
    metadata.slackName = slackName
  }
  const topic = isObject(c.topic) ? str(c.topic.value) : undefined
  if (topic !== undefined) {
    metadata.topic = topic
  }
  if (c.is_general === true) {
    metadata.general = true
  }
  const group: { -readonly [K in keyof LegacyGroup]: LegacyGroup[K] } = {
    id,
    name,
    type: kind === 'channel' ? 'public' : 'private',
    metadata,
  }
  const createdAt = secondsMs('created', c.created)
  if (createdAt !== undefined) {
    group.createdAt = createdAt
  }
  const creator = str(c.creator)
  if (creator !== undefined) {
    group.ownerId = slackId('creator', creator)
  }
  const purpose = isObject(c.purpose) ? str(c.purpose.value) : undefined
  if (purpose !== undefined) {
    group.description = purpose
  }
  if (c.is_archived === true) {
    group.archivedAt = archivedAt
  }
  return group
}

/** The `members` of a conversation entry: user ids, in the file's order. */
export function membersOf(c: unknown): unknown[] {
  return isObject(c) && Array.isArray(c.members) ? c.members : []
}

/**
 * Why a conversation entry cannot become a group (`field: reason`), or undefined when it can: its
 * members and messages are problems that name this cause, never "unknown group".
 */
export function groupRefusal(c: unknown, file: GroupFile): string | undefined {
  try {
    decodeGroup(c, file, 0)
    return undefined
  } catch (err) {
    if (err instanceof FieldProblem) {
      return `${err.field}: ${err.message}`
    }
    throw err
  }
}
