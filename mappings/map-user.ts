/**
 * Legacy user → `UserImport`. Policies: bots, deactivatedUsers, roles, userEmails, fieldLimits, names, ids.
 */
import type { JsonObject, LegacyUser } from '../src/model/index.ts'
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
import { isPlatformId, toPlatformId } from './ids.ts'
import type { MappingContext, MapResult } from './types.ts'

export function mapUser(record: LegacyUser, ctx: MappingContext): MapResult<'users'> {
  const out = new Outcomes()
  return guard(out, () => {
    record = cleanRecord('users', record, ctx, out)
    const p = ctx.policies
    if (typeof record.id !== 'string' || record.id === '') {
      throw new Rejection('id', 'user id is missing')
    }
    const name = requiredName(record.name, out)

    if (record.isBot && p.bots.mode === 'skip') {
      throw new Skip('bots', 'skipped', 'bot user (bots.mode: skip)')
    }
    if (record.isBot) {
      out.add('bots', 'kept')
    }

    let deactivatedAt: number | undefined
    if (record.deactivatedAt !== undefined && record.deactivatedAt !== null) {
      if (p.deactivatedUsers === 'skip') {
        throw new Skip('deactivatedUsers', 'skipped', 'deactivated user (deactivatedUsers: skip)')
      }
      if (p.deactivatedUsers === 'activate') {
        out.add('deactivatedUsers', 'activated')
      } else {
        deactivatedAt = optionalSeconds(record.deactivatedAt, 'deactivatedAt', ctx, out)
        // An unreadable deactivation time still means "deactivated": keep the user deactivated now.
        deactivatedAt ??= Math.floor(ctx.now / 1000)
        out.add('deactivatedUsers', 'kept-deactivated')
      }
    }

    let role: string | undefined
    if (record.role !== undefined && record.role !== null && record.role !== '') {
      const mapped = p.roles.map[record.role]
      if (mapped !== undefined) {
        role = mapped
        out.add('roles', 'mapped')
      } else if (p.roles.unmapped === 'keep' && isPlatformId(record.role)) {
        role = record.role
        out.add('roles', 'kept')
      } else {
        out.add('roles', 'dropped')
      }
    }

    const tags = [...(record.tags ?? [])]
    if (record.isBot && p.bots.tag !== '') {
      tags.push(p.bots.tag)
    }

    // The import has no e-mail field (platform-spec: uid, name, avatar, link, role, …, metadata).
    const extra: JsonObject = {}
    if (typeof record.email === 'string' && record.email.trim() !== '') {
      if (p.userEmails === 'metadata') {
        extra.email = record.email.trim()
        out.add('userEmails', 'in-metadata')
      } else {
        out.add('userEmails', 'dropped')
      }
    }
    const own: JsonObject = {}
    if (p.legacyMetadata.ids) {
      own.id = record.id
    }
    if (record.username !== undefined) {
      own.username = record.username
    }
    if (record.isBot) {
      own.isBot = true
    }

    const candidate = toPlatformId(record.id)
    const uid = ctx.ids.claim('user', record.id, candidate)
    noteId(out, record.id, candidate, uid)

    const payload = compact({
      uid,
      name,
      avatar: optionalUrl(record.avatar, 'avatar', ctx, out),
      link: optionalUrl(record.profileUrl, 'profileUrl', ctx, out),
      role,
      createdAt: optionalSeconds(record.createdAt, 'createdAt', ctx, out),
      lastActiveAt: optionalSeconds(record.lastActiveAt, 'lastActiveAt', ctx, out),
      metadata: userGroupMetadata(record.metadata, extra, own, ctx, out),
      tags: fixTags(tags, 'tags', ctx, out),
      deactivatedAt,
    })
    return { kind: 'items', items: [finish('users', payload, record, ctx, out)], extraItems: [], outcomes: out.list }
  })
}
