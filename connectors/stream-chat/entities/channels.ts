/**
 * A Stream Chat channel → LegacyGroup, or a one-to-one conversation. A distinct channel (created
 * from its member list, id `!members-…`) with exactly two members is a one-to-one conversation:
 * its messages go to the other member, and it is no group. Other distinct channels are group DMs
 * (private groups). The channel type decides public or private (README: channel types).
 */
import type { JsonObject, LegacyGroup, LegacyGroupType } from '../../../src/model/records.ts'
import type { OutcomeList } from '../../rows/outcomes.ts'
import { BUILT_IN_CHANNEL_TYPES } from '../config.ts'
import { customFields, isObject, noteCustom, str, streamId, timeMs } from './fields.ts'

const KNOWN = new Set([
  'id',
  'type',
  'cid',
  'created_by',
  'created_by_id',
  'created_at',
  'updated_at',
  'deleted_at',
  'last_message_at',
  'frozen',
  'disabled',
  'member_count',
  'config',
  'name',
  'image',
  'team',
  'truncated_at',
  'truncated_by',
  'hidden',
  'own_capabilities',
  'cooldown',
  'auto_translation_language',
  'auto_translation_enabled',
  'message_count',
  'members',
  'member_ids',
  'description',
])

export const DISTINCT_PREFIX = '!members-'

/** The cid (`type:id`) of a channel object, from `cid` or `type` and `id`. */
export function channelCid(o: JsonObject): string {
  if (typeof o.cid === 'string' && o.cid.includes(':')) {
    return streamId('cid', o.cid)
  }
  const type = streamId('type', o.type)
  return `${type}:${streamId('id', o.id)}`
}

export interface ChannelPolicy {
  readonly customChannelTypes: LegacyGroupType
  readonly keepCustom: boolean
}

export function groupTypeOf(streamType: string, policy: ChannelPolicy): LegacyGroupType {
  return (BUILT_IN_CHANNEL_TYPES as Record<string, LegacyGroupType>)[streamType] ?? policy.customChannelTypes
}

/**
 * The channel as a group; `memberIds` names a group DM that has no name. Notes, for the plan's
 * policy outcomes: `customChannelTypes: private | public` (a channel of a custom type),
 * `distinctChannels: group-dm`, `deletedChannels: archived`, `customFields: in-metadata | dropped`.
 */
export function decodeChannel(o: JsonObject, memberIds: readonly string[], policy: ChannelPolicy, out?: OutcomeList): LegacyGroup {
  const cid = channelCid(o)
  const streamType = cid.slice(0, cid.indexOf(':'))
  const id = cid.slice(cid.indexOf(':') + 1)
  const distinct = id.startsWith(DISTINCT_PREFIX)
  const ownerField = isObject(o.created_by) ? 'created_by.id' : o.created_by !== undefined && o.created_by !== null ? 'created_by' : 'created_by_id'
  const owner = isObject(o.created_by) ? o.created_by.id : (o.created_by ?? o.created_by_id)
  const ownerId = owner === undefined || owner === null ? undefined : streamId(ownerField, owner)
  const createdAt = timeMs('created_at', o.created_at)
  const archivedAt = timeMs('deleted_at', o.deleted_at)
  const updatedAt = timeMs('updated_at', o.updated_at)
  const custom = policy.keepCustom || out !== undefined ? customFields(o, KNOWN) : undefined
  const type = distinct ? 'private' : groupTypeOf(streamType, policy)
  if (out !== undefined) {
    noteCustom(out, custom, policy.keepCustom)
    noteChannel(out, streamType, distinct, archivedAt !== undefined, type)
  }
  const metadata: JsonObject = {
    streamType,
    ...(distinct ? { groupDm: true } : {}),
    ...(o.frozen === true ? { frozen: true } : {}),
    ...(o.disabled === true ? { disabled: true } : {}),
    ...(str(o.team) !== undefined ? { team: o.team } : {}),
    ...(custom !== undefined && policy.keepCustom ? { custom } : {}),
  }
  return {
    id: cid,
    name: str(o.name) ?? (distinct && memberIds.length > 0 ? memberIds.join(', ') : id),
    type,
    ...(ownerId !== undefined ? { ownerId } : {}),
    ...(str(o.image) !== undefined ? { icon: o.image as string } : {}),
    ...(str(o.description) !== undefined ? { description: o.description as string } : {}),
    metadata,
    ...(createdAt !== undefined ? { createdAt } : {}),
    ...(archivedAt !== undefined ? { archivedAt } : {}),
    ...(updatedAt !== undefined ? { updatedAt } : {}),
  }
}

function noteChannel(out: OutcomeList, streamType: string, distinct: boolean, deleted: boolean, type: LegacyGroupType): void {
  if (distinct) {
    out.add('distinctChannels', 'group-dm')
  } else if (!Object.hasOwn(BUILT_IN_CHANNEL_TYPES, streamType)) {
    out.add('customChannelTypes', type)
  }
  if (deleted) {
    out.add('deletedChannels', 'archived')
  }
}
