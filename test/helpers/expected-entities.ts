/**
 * The oracle's users, groups and members (mappings/README.md § User, group and member policies,
 * § Ids, § Limits on optional fields), stated from a canonical record and what was planned before it.
 */
import type { LegacyGroup, LegacyMember, LegacyUser } from '../../src/model/index.ts'
import { type ItemFacts, state } from './expected-facts.ts'
import { memberKeyOf } from './expected-ids.ts'
import {
  claim,
  expectItem,
  hasUnstorable,
  isPlanned,
  metadataFacts,
  nameFacts,
  reject,
  seconds,
  skip,
  stripped,
  tagsOf,
  type World,
} from './expected-world.ts'

const URL_MAX = 3000
const url = (v: string | undefined) => (v !== undefined && v !== '' && v.length <= URL_MAX ? v : null)

/** The first legacy id field holding a character no id may hold (ids are never changed: a rejection). */
function badId(fields: Record<string, unknown>): string | undefined {
  return Object.entries(fields).find(([, v]) => typeof v === 'string' && hasUnstorable(v))?.[0]
}

export function expectUser(w: World, raw: LegacyUser): void {
  const bad = badId({ id: raw.id })
  if (bad !== undefined) {
    return reject(w, 'users', raw.id, bad)
  }
  const u = stripped(raw)
  const facts: ItemFacts = new Map()
  if (!nameFacts(facts, u.name)) {
    w.users.set(u.id, { rejected: 'name' })
    return reject(w, 'users', u.id, 'name')
  }
  const p = w.policies
  if (u.isBot && p.bots.mode === 'skip') {
    w.users.set(u.id, { skipped: 'bots' })
    return skip(w, 'users', u.id, 'bots')
  }
  const uid = claim(w, 'users', u.id)
  state(facts, ['avatar'], { eq: url(u.avatar) })
  state(facts, ['link'], { eq: url(u.profileUrl) })
  // roles.map is empty and roles.unmapped `drop` by default: no role, stored as the platform's default.
  state(facts, ['role'], { eq: 'default' })
  const created = seconds(u.createdAt)
  if (created !== undefined) {
    state(facts, ['created_at'], { eq: created })
  }
  state(facts, ['last_active_at'], { eq: seconds(u.lastActiveAt) ?? null })
  if (u.deactivatedAt === undefined || seconds(u.deactivatedAt) !== undefined) {
    // deactivatedUsers: keep (an invalid time stays deactivated "as of now": not stated).
    state(facts, ['deactivated_at'], { eq: seconds(u.deactivatedAt) ?? null })
  }
  state(facts, ['tags'], { eq: tagsOf(u.tags, u.isBot ? [p.bots.tag] : []) })
  metadataFacts(facts, ['metadata'], u.metadata, u.email !== undefined ? { email: u.email } : {}, { id: u.id, ...(u.isBot ? { isBot: true } : {}) })
  const name = (facts.get('name')?.check as { eq?: string }).eq ?? u.name.trim()
  w.users.set(u.id, { uid, name })
  if (u.username !== undefined && u.username !== '') {
    w.usernames.add(u.username.toLowerCase())
  }
  expectItem(w, 'users', uid, u.id, facts)
}

export function expectGroup(w: World, raw: LegacyGroup): void {
  const bad = badId({ id: raw.id, ownerId: raw.ownerId })
  if (bad !== undefined) {
    return reject(w, 'groups', raw.id, bad)
  }
  const g = stripped(raw)
  const facts: ItemFacts = new Map()
  if (!nameFacts(facts, g.name)) {
    w.groups.set(g.id, { rejected: 'name' })
    return reject(w, 'groups', g.id, 'name')
  }
  const p = w.policies
  const archived = g.archivedAt !== undefined
  if (archived && p.archivedGroups.mode === 'skip') {
    w.groups.set(g.id, { skipped: 'archivedGroups' })
    return skip(w, 'groups', g.id, 'archivedGroups')
  }
  const guid = claim(w, 'groups', g.id)
  // groupTypes: identity; a password group without a password → private (withoutPassword).
  const type = g.type === 'password' && !g.password ? 'private' : g.type
  state(facts, ['type'], { eq: type })
  state(facts, ['password'], { eq: type === 'password' ? g.password : null })
  state(facts, ['icon'], { eq: url(g.icon) })
  // Group owner: an owner that is not a known user is omitted (a skipped or rejected one: not stated).
  const owner = g.ownerId === undefined ? undefined : w.users.get(g.ownerId)
  if (owner === undefined || isPlanned(owner)) {
    state(facts, ['owner'], { eq: owner?.uid ?? null })
  }
  const createdAt = seconds(g.createdAt)
  if (createdAt !== undefined) {
    state(facts, ['created_at'], { eq: createdAt })
  }
  state(facts, ['tags'], { eq: tagsOf(g.tags, archived ? [p.archivedGroups.tag] : []) })
  const archivedAt = seconds(g.archivedAt)
  metadataFacts(facts, ['metadata'], g.metadata, g.description !== undefined && g.description !== '' ? { description: g.description } : {}, {
    id: g.id,
    ...(archived && archivedAt !== undefined ? { archivedAt } : {}),
  })
  w.groups.set(g.id, { guid, createdAt, ownerId: owner !== undefined && isPlanned(owner) ? g.ownerId : undefined })
  expectItem(w, 'groups', guid, g.id, facts)
}

export function expectMember(w: World, raw: LegacyMember): void {
  const legacyId = `${raw.groupId}/${raw.userId}`
  const bad = badId({ groupId: raw.groupId, userId: raw.userId })
  if (bad !== undefined) {
    return reject(w, 'members', legacyId, bad)
  }
  const group = w.groups.get(raw.groupId)
  const user = w.users.get(raw.userId)
  // Unknown or rejected group or user → rejected naming the field; skipped by a policy → skipped.
  for (const [field, ref] of [
    ['groupId', group],
    ['userId', user],
  ] as const) {
    if (ref === undefined || 'rejected' in ref) {
      return reject(w, 'members', legacyId, field)
    }
  }
  if (!isPlanned(group) || !isPlanned(user)) {
    return skip(w, 'members', legacyId, 'dependencies')
  }
  const facts: ItemFacts = new Map()
  state(facts, ['guid'], { eq: group.guid })
  state(facts, ['uid'], { eq: user.uid })
  // scopes: identity; the group's owner → admin, whatever its legacy scope.
  state(facts, ['scope'], { eq: group.ownerId === raw.userId ? 'admin' : raw.scope })
  state(facts, ['is_banned'], { eq: raw.banned })
  const joined = joinedAtFact(w, group.createdAt, seconds(raw.joinedAt))
  if (joined !== undefined) {
    state(facts, ['joined_at'], { eq: joined })
  }
  expectItem(w, 'members', memberKeyOf(group.guid, user.uid), legacyId, facts)
}

/**
 * `joinedAt: clamp`: strictly between the group's createdAt and now, else createdAt + 1 s. Not
 * stated: no joinedAt (the platform sets it), and a time the run's own clock decides (≥ now − 1 s).
 */
function joinedAtFact(w: World, createdAt: number | undefined, joined: number | undefined): number | undefined {
  const now = Math.floor(w.now / 1000)
  if (joined === undefined || joined >= now - 1) {
    return undefined
  }
  return createdAt !== undefined && joined <= createdAt ? createdAt + 1 : joined
}
