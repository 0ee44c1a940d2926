/** Generic SQL groups: `id, name` required; `type` is public (default), private or password. */
import { GROUP_KINDS, type LegacyGroup } from '../../../src/model/records.ts'
import {
  compact,
  decodeChoice,
  decodeId,
  decodeJson,
  decodeOptionalId,
  decodeOptionalText,
  decodeRequiredText,
  decodeStringList,
  decodeTimestamp,
  printableId,
} from '../../sql/decode.ts'
import type { EntitySpec } from './entity-spec.ts'

export const groups: EntitySpec<'groups'> = {
  entity: 'groups',
  required: ['id', 'name'],
  optional: ['type', 'password', 'owner_id', 'icon', 'description', 'metadata', 'tags', 'created_at', 'archived_at', 'updated_at'],
  defaultKeys: ['id'],
  idColumns: ['id'],
  deltaColumns: ['updated_at', 'created_at'],
  decode(row, { timeFormat: tf, lossy }): LegacyGroup {
    return compact<LegacyGroup>({
      id: decodeId('id', row.id, lossy),
      name: decodeRequiredText('name', row.name, lossy),
      type: decodeChoice('type', row.type, GROUP_KINDS, 'public'),
      password: decodeOptionalText('password', row.password, lossy),
      ownerId: decodeOptionalId('owner_id', row.owner_id, lossy),
      icon: decodeOptionalText('icon', row.icon, lossy),
      description: decodeOptionalText('description', row.description, lossy),
      metadata: decodeJson('metadata', row.metadata, 'object', lossy),
      tags: decodeStringList('tags', row.tags, lossy),
      createdAt: decodeTimestamp('created_at', row.created_at, tf),
      archivedAt: decodeTimestamp('archived_at', row.archived_at, tf),
      updatedAt: decodeTimestamp('updated_at', row.updated_at, tf),
    })
  },
  legacyIdOf: (row) => printableId(row.id),
}
