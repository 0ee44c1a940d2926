/**
 * A Sendbird channel (the `channels` export's record; the Platform API's group and open channel
 * resources) → a LegacyGroup, or, for a private two-member group channel, a one-to-one
 * conversation (no group: its messages go to the other member).
 */
import type { LegacyGroup } from '../../../src/model/records.ts'
import type { OutcomeList } from '../../rows/outcomes.ts'
import { bool, dataField, defined, FieldProblem, id, isObject, num, str, time, userIdOf } from '../fields.ts'

export interface ChannelShape {
  readonly url: string
  readonly open: boolean
  /** The two members of a one-to-one conversation, else undefined. */
  readonly direct?: readonly [string, string]
}

/** An open channel: `channel_type: open`, or the open channel's `participant_count` without a `member_count`. */
export const isOpenChannel = (o: Record<string, unknown>): boolean =>
  o.channel_type === 'open' ||
  o.channel_type === 'open_channels' ||
  (o.channel_type === undefined && o.participant_count !== undefined && o.member_count === undefined)

/** The user ids of a channel's `members` (objects with `user_id`, or ids). */
export const memberIds = (o: Record<string, unknown>): string[] =>
  Array.isArray(o.members) ? o.members.map(userIdOf).filter((u): u is string => u !== undefined) : []

/**
 * A group channel with exactly two members that is neither a Supergroup (`is_super`), public
 * (`is_public`) nor a broadcast channel is a one-to-one conversation, whether or not it is distinct.
 */
export function channelShape(o: unknown): ChannelShape {
  if (!isObject(o)) {
    throw new FieldProblem('channel', 'the channel is not an object')
  }
  const url = id('channel_url', o.channel_url)
  const open = isOpenChannel(o)
  const ids = memberIds(o)
  const count = num('member_count', o.member_count) ?? ids.length
  const twoOf = !open && !bool(o.is_super) && !bool(o.is_public) && !bool(o.is_broadcast) && count === 2 && ids.length === 2
  return twoOf ? { url, open, direct: [ids[0] as string, ids[1] as string] } : { url, open }
}

/**
 * The channel as a group. Notes, for the plan's policy outcomes: `customType: in-metadata`,
 * `customData: in-metadata` (`data`), `accessCodeChannels: private` (the code is never returned).
 */
export function sendbirdGroup(o: Record<string, unknown>, shape: ChannelShape, out?: OutcomeList): LegacyGroup {
  const metadata = defined({
    channelType: shape.open ? 'open' : 'group',
    customType: str(o.custom_type),
    data: dataField(o.data),
    distinct: shape.open ? undefined : bool(o.is_distinct),
    super: shape.open ? undefined : bool(o.is_super),
    broadcast: shape.open ? undefined : bool(o.is_broadcast),
    ephemeral: bool(o.is_ephemeral) || undefined,
    frozen: bool(o.freeze) || undefined,
    accessCodeRequired: bool(o.is_access_code_required) || undefined,
  })
  if (out !== undefined) {
    noteChannel(out, metadata)
  }
  return defined({
    id: shape.url,
    name: str(o.name)?.trim() || shape.url,
    type: shape.open || bool(o.is_public) ? ('public' as const) : ('private' as const),
    ownerId: userIdOf(o.created_by),
    icon: str(o.cover_url),
    metadata,
    createdAt: time('created_at', o.created_at),
  })
}

function noteChannel(out: OutcomeList, metadata: { customType?: string; data?: unknown; accessCodeRequired?: boolean }): void {
  if (metadata.customType !== undefined) {
    out.add('customType', 'in-metadata')
  }
  if (metadata.data !== undefined) {
    out.add('customData', 'in-metadata')
  }
  if (metadata.accessCodeRequired === true) {
    out.add('accessCodeChannels', 'private')
  }
}
