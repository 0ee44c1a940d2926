/** Generic SQL members: `group_id, user_id` required; `scope` admin/moderator/participant (default). */
import { type LegacyMember, MEMBER_ROLES } from '../../../src/model/records.ts'
import { compact, decodeBoolean, decodeChoice, decodeId, decodeTimestamp, printableId } from '../../sql/decode.ts'
import type { EntitySpec } from './entity-spec.ts'

export const members: EntitySpec<'members'> = {
  entity: 'members',
  required: ['group_id', 'user_id'],
  optional: ['scope', 'banned', 'joined_at', 'updated_at'],
  defaultKeys: ['group_id', 'user_id'],
  idColumns: ['group_id', 'user_id'],
  deltaColumns: ['updated_at', 'joined_at'],
  decode(row, { timeFormat: tf, lossy }): LegacyMember {
    return compact<LegacyMember>({
      groupId: decodeId('group_id', row.group_id, lossy),
      userId: decodeId('user_id', row.user_id, lossy),
      scope: decodeChoice('scope', row.scope, MEMBER_ROLES, 'participant'),
      banned: decodeBoolean('banned', row.banned),
      joinedAt: decodeTimestamp('joined_at', row.joined_at, tf),
      updatedAt: decodeTimestamp('updated_at', row.updated_at, tf),
    })
  },
  legacyIdOf: (row) => `${printableId(row.group_id)}/${printableId(row.user_id)}`,
}
