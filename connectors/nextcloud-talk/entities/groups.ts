/**
 * Talk group and public conversations (`talk_rooms` type 2 and 3; 4, the changelog, with
 * `rooms.changelog: group`) → `LegacyGroup`: type 2 → private (invite only), 3 → public (anyone
 * with the link). Room passwords are stored hashed, so a password room is imported as public with
 * `metadata.passwordProtected`. The owner is the first attendee of participant type 1 (owner).
 */
import type { JsonObject, LegacyGroup } from '../../../src/model/records.ts'
import { compact, decodeBoolean, decodeCount, decodeId, decodeOptionalText, FieldProblem } from '../../sql/decode.ts'
import { ROOM_TYPE } from '../sql/queries.ts'
import { ncTime } from './decode-helpers.ts'

export interface GroupDecodeContext {
  readonly lossy: boolean
  readonly siteUrl?: string | undefined
}

export function decodeGroup(row: Record<string, unknown>, ctx: GroupDecodeContext): LegacyGroup {
  const { lossy } = ctx
  const id = decodeId('id', row.id, lossy)
  const token = decodeOptionalText('token', row.token, lossy)
  const roomType = decodeCount('type', row.room_type)
  if (roomType !== ROOM_TYPE.group && roomType !== ROOM_TYPE.public && roomType !== ROOM_TYPE.changelog) {
    throw new FieldProblem('type', `room type ${String(row.room_type)} is not a group conversation`)
  }
  const roomName = decodeOptionalText('name', row.room_name, lossy)?.trim()
  const name = roomName || token
  if (!name) {
    throw new FieldProblem('name', 'is empty: the conversation has neither a name nor a token')
  }
  const objectType = decodeOptionalText('object_type', row.object_type, lossy)
  const remoteServer = decodeOptionalText('remote_server', row.remote_server, lossy)
  const metadata = compact<JsonObject>({
    token,
    talkType: roomType,
    unnamed: roomName ? undefined : true,
    readOnly: decodeBoolean('read_only', row.read_only) || undefined,
    listable: decodeCount('listable', row.listable) || undefined,
    objectType,
    objectId: objectType ? decodeOptionalText('object_id', row.object_id, lossy) : undefined,
    remoteServer,
    link: ctx.siteUrl && token ? `${ctx.siteUrl}/call/${token}` : undefined,
  })
  return compact<LegacyGroup>({
    id,
    name,
    type: roomType === ROOM_TYPE.public ? 'public' : 'private',
    ownerId: decodeOptionalText('owner_id', row.owner_id, lossy),
    description: decodeOptionalText('description', row.description, lossy),
    metadata,
    updatedAt: ncTime('last_activity', row.last_activity),
  })
}
