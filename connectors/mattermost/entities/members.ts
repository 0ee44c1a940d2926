/**
 * Mattermost channel members (of non-direct channels) → `LegacyMember`: `schemeadmin` or a legacy
 * explicit `channel_admin` role → admin, everyone else (guests included) → participant. Mattermost
 * has no bans. The join time comes from `channelmemberhistory` when it has one.
 */
import type { LegacyMember } from '../../../src/model/records.ts'
import { compact, decodeBoolean, decodeId } from '../../sql/decode.ts'
import { mmTime, roleList } from './decode-helpers.ts'

export function decodeMember(row: Record<string, unknown>, lossy: boolean): LegacyMember {
  const admin = decodeBoolean('schemeadmin', row.schemeadmin) || roleList(row.roles).includes('channel_admin')
  return compact<LegacyMember>({
    groupId: decodeId('channelid', row.channelid, lossy),
    userId: decodeId('userid', row.userid, lossy),
    scope: admin ? 'admin' : 'participant',
    banned: false,
    joinedAt: mmTime('jointime', row.jointime),
    updatedAt: mmTime('lastupdateat', row.lastupdateat),
  })
}
