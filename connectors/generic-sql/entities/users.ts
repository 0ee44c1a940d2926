/** Generic SQL users: `id, name` required; see README.md for the optional columns. */
import type { LegacyUser } from '../../../src/model/records.ts'
import {
  compact,
  decodeBoolean,
  decodeId,
  decodeJson,
  decodeOptionalText,
  decodeRequiredText,
  decodeStringList,
  decodeTimestamp,
  printableId,
} from '../../sql/decode.ts'
import type { EntitySpec } from './entity-spec.ts'

export const users: EntitySpec<'users'> = {
  entity: 'users',
  required: ['id', 'name'],
  optional: [
    'username',
    'email',
    'avatar',
    'profile_url',
    'role',
    'metadata',
    'tags',
    'created_at',
    'last_active_at',
    'deactivated_at',
    'is_bot',
    'updated_at',
  ],
  defaultKeys: ['id'],
  idColumns: ['id'],
  deltaColumns: ['updated_at', 'created_at'],
  decode(row, { timeFormat: tf, lossy }): LegacyUser {
    return compact<LegacyUser>({
      id: decodeId('id', row.id, lossy),
      name: decodeRequiredText('name', row.name, lossy),
      username: decodeOptionalText('username', row.username, lossy),
      email: decodeOptionalText('email', row.email, lossy),
      avatar: decodeOptionalText('avatar', row.avatar, lossy),
      profileUrl: decodeOptionalText('profile_url', row.profile_url, lossy),
      role: decodeOptionalText('role', row.role, lossy),
      metadata: decodeJson('metadata', row.metadata, 'object', lossy),
      tags: decodeStringList('tags', row.tags, lossy),
      createdAt: decodeTimestamp('created_at', row.created_at, tf),
      lastActiveAt: decodeTimestamp('last_active_at', row.last_active_at, tf),
      deactivatedAt: decodeTimestamp('deactivated_at', row.deactivated_at, tf),
      isBot: decodeBoolean('is_bot', row.is_bot),
      updatedAt: decodeTimestamp('updated_at', row.updated_at, tf),
    })
  },
  legacyIdOf: (row) => printableId(row.id),
}
