/**
 * Mattermost channel members (of non-direct channels) → `LegacyMember`: `schemeadmin` or a legacy
 * explicit `channel_admin` role → admin, everyone else (guests included) → participant. Mattermost
 * has no bans. The join time comes from `channelmemberhistory` when it has one.
 */
import type { LegacyMember } from '../../../src/model/records.ts'
import { compact, decodeBoolean, decodeId } from '../../sql/decode.ts'
import type { JoinTimes } from '../sql/page-lookups.ts'
import { mmTime, roleList } from './decode-helpers.ts'

/** `joinTimes`: the page's latest join time of each membership the history holds. */
export function decodeMember(row: Record<string, unknown>, lossy: boolean, joinTimes: JoinTimes): LegacyMember {
  const admin = decodeBoolean('schemeadmin', row.schemeadmin) || roleList(row.roles).includes('channel_admin')
  return compact<LegacyMember>({
    groupId: decodeId('channelid', row.channelid, lossy),
    userId: decodeId('userid', row.userid, lossy),
    scope: admin ? 'admin' : 'participant',
    banned: false,
    joinedAt: mmTime('jointime', joinTimes.get(row.channelid, row.userid)),
    updatedAt: mmTime('lastupdateat', row.lastupdateat),
  })
}
