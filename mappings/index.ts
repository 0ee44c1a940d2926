/**
 * The mappings: pure functions from canonical legacy records (`src/model`) to validated import
 * items (`src/target/schemas`), the id policy, and the policies. See `README.md` in this folder.
 */
import type { LegacyEntity, LegacyRecordOf } from '../src/model/index.ts'
import { mapGroup } from './map-group.ts'
import { mapMember } from './map-member.ts'
import { mapMessage } from './map-message.ts'
import { mapUser } from './map-user.ts'
import type { Mapper, MappingContext, MapResult } from './types.ts'

export { deriveGroupCreatedAt, GROUP_CREATED_AT_OUTCOME_PREFIX, GROUP_CREATED_AT_RULES, type GroupCreatedAtRule } from './group-created-at.ts'
export * from './ids.ts'
export { placeholderUid } from './message-participants.ts'
export { SYSTEM_USER_LEGACY_ID } from './message-system.ts'
export * from './policies.ts'
export * from './types.ts'
export { type AdjustFn, loadUserModule, type UserModule } from './user-module.ts'
export { mapGroup, mapMember, mapMessage, mapUser }

/** The mapping of each entity (a static registry: nothing is discovered at runtime). */
export const mappers = {
  users: mapUser,
  groups: mapGroup,
  members: mapMember,
  messages: mapMessage,
} as const satisfies { [E in LegacyEntity]: Mapper<E> }

/** Maps one record of `entity`. Never throws: bad input is a `rejected` result. */
export function mapRecord<E extends LegacyEntity>(entity: E, record: LegacyRecordOf[E], ctx: MappingContext): MapResult<E> {
  return (mappers[entity] as unknown as Mapper<E>)(record, ctx)
}
export { createMappingContext, type MemoryContextOptions } from './context.ts'
