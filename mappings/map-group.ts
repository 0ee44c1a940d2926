/**
 * Legacy group → `GroupImport`. Policies: groupTypes, archivedGroups, groupDescription,
 * groupOwner, joinedAt (a creation time for a group without one), fieldLimits, names, ids.
 */
import type { JsonObject, LegacyGroup } from '../src/model/index.ts'
import { LIMITS } from '../src/target/schemas.ts'
import { cleanRecord } from './clean-record.ts'
import {
  compact,
  finish,
  fixTags,
  guard,
  noteId,
  optionalSeconds,
  optionalUrl,
  Outcomes,
  Rejection,
  requiredName,
  Skip,
  userGroupMetadata,
} from './common.ts'
import { deriveGroupCreatedAt, GROUP_CREATED_AT_OUTCOME_PREFIX } from './group-created-at.ts'
import { toPlatformId } from './ids.ts'
import { isSkippedRef, type MappingContext, type MapResult } from './types.ts'

const LEGACY_TYPES = new Set(['public', 'private', 'password'])

export function mapGroup(record: LegacyGroup, ctx: MappingContext): MapResult<'groups'> {
  const out = new Outcomes()
  return guard(out, () => {
    record = cleanRecord('groups', record, ctx, out)
    const p = ctx.policies
    if (typeof record.id !== 'string' || record.id === '') {
      throw new Rejection('id', 'group id is missing')
    }
    const name = requiredName(record.name, out)
    if (!LEGACY_TYPES.has(record.type)) {
      throw new Rejection('type', `unknown group type ${JSON.stringify(record.type)}`)
    }

    const archived = record.archivedAt !== undefined && record.archivedAt !== null
    if (archived && p.archivedGroups.mode === 'skip') {
      throw new Skip('archivedGroups', 'skipped', 'archived group (archivedGroups.mode: skip)')
    }

    let type = p.groupTypes[record.type]
    if (type !== record.type) {
      out.add('groupTypes', `${record.type}-to-${type}`)
    }
    let password: string | undefined
    if (type === 'password') {
      if (record.password === undefined || record.password === null || record.password === '') {
        if (p.groupTypes.withoutPassword === 'reject') {
          throw new Rejection('password', 'a password group without a password', 'groupTypes')
        }
        type = 'private'
        out.add('groupTypes', 'passwordless-to-private')
      } else if (record.password.length > LIMITS.GROUP_PASSWORD_MAX) {
        throw new Rejection('password', `password is over ${LIMITS.GROUP_PASSWORD_MAX} characters`)
      } else {
        password = record.password
      }
    }

    let owner: string | undefined
    if (record.ownerId !== undefined && record.ownerId !== null && record.ownerId !== '') {
      const u = ctx.user(record.ownerId)
      if (u === undefined || isSkippedRef(u)) {
        out.add('groupOwner', 'unknown-omitted')
      } else {
        owner = u.uid
      }
    }

    const extra: JsonObject = {}
    if (record.description !== undefined && record.description !== null && record.description !== '') {
      if (p.groupDescription === 'metadata') {
        extra.description = record.description
        out.add('groupDescription', 'in-metadata')
      } else {
        out.add('groupDescription', 'dropped')
      }
    }
    const own: JsonObject = {}
    if (p.legacyMetadata.ids) {
      own.id = record.id
    }
    const tags = [...(record.tags ?? [])]
    if (archived) {
      const at = optionalSeconds(record.archivedAt, 'archivedAt', ctx, out)
      if (at !== undefined) {
        own.archivedAt = at
      } else {
        own.archived = true
      }
      if (p.archivedGroups.tag !== '') {
        tags.push(p.archivedGroups.tag)
      }
      out.add('archivedGroups', 'kept')
    }

    const candidate = toPlatformId(record.id)
    const guid = ctx.ids.claim('group', record.id, candidate)
    noteId(out, record.id, candidate, guid)

    let createdAt = optionalSeconds(record.createdAt, 'createdAt', ctx, out)
    if (createdAt === undefined && ctx.groupCreation !== undefined) {
      const derived = deriveGroupCreatedAt(ctx.groupCreation(record.id), ctx.now)
      createdAt = derived.createdAt
      out.add('joinedAt', `${GROUP_CREATED_AT_OUTCOME_PREFIX}${derived.rule}`)
    }

    const payload = compact({
      guid,
      name,
      type,
      icon: optionalUrl(record.icon, 'icon', ctx, out),
      password,
      owner,
      createdAt,
      metadata: userGroupMetadata(record.metadata, extra, own, ctx, out),
      tags: fixTags(tags, 'tags', ctx, out),
    })
    return { kind: 'items', items: [finish('groups', payload, record, ctx, out)], extraItems: [], outcomes: out.list }
  })
}
