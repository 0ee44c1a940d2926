/**
 * `rocketchat_room` documents that are groups → `LegacyGroup`: `c` public, `p` private, a group DM
 * (`d`, more than two users) private and named by its members' usernames. Discussions (`prid`) and
 * team rooms (`teamId`) are groups of their own, their parent room or team in metadata. Rocket.Chat
 * keeps no archive time: an archived room's `archivedAt` is its `_updatedAt` (else its `ts`).
 */
import type { JsonObject, LegacyGroup } from '../../../src/model/records.ts'
import type { RoomKind } from './room-kind.ts'
import { compact, type Doc, FieldProblem, optionalText, optionalTime, requiredId, stringList, userRef } from './values.ts'

export function decodeGroup(room: Doc, kind: RoomKind): LegacyGroup {
  const id = requiredId('_id', room._id)
  if (kind.kind === 'unknown') {
    throw new FieldProblem(kind.field, kind.reason)
  }
  const groupDm = kind.kind === 'group-dm'
  const slug = optionalText('name', room.name)
  const usernames = groupDm ? stringList('usernames', room.usernames) : []
  const name = optionalText('fname', room.fname)?.trim() || slug?.trim() || (groupDm ? usernames.join(', ') : '')
  if (name === '') {
    throw new FieldProblem('name', 'is missing: the room has neither fname nor name')
  }
  const createdAt = optionalTime('ts', room.ts)
  const updatedAt = optionalTime('_updatedAt', room._updatedAt)
  const topic = optionalText('topic', room.topic)
  const metadata = compact<JsonObject>({
    rocketchatType: room.t as string,
    roomName: slug && slug !== name ? slug : undefined,
    topic: topic || undefined,
    announcement: optionalText('announcement', room.announcement) || undefined,
    discussionOf: optionalText('prid', room.prid) || undefined,
    teamId: optionalText('teamId', room.teamId) || undefined,
    teamMain: room.teamMain === true ? true : undefined,
    readOnly: room.ro === true ? true : undefined,
    default: room.default === true ? true : undefined,
    encrypted: room.encrypted === true ? true : undefined,
    memberIds: groupDm ? [...kind.uids] : undefined,
  })
  return compact<LegacyGroup>({
    id,
    name,
    type: room.t === 'c' ? 'public' : 'private',
    ownerId: groupDm ? undefined : userRef('u', room.u, false)?.id,
    description: optionalText('description', room.description) || topic || undefined,
    metadata,
    createdAt,
    archivedAt: room.archived === true ? (updatedAt ?? createdAt) : undefined,
    updatedAt,
  })
}
