/**
 * What a webhook delivery says was changed on the platform (issue 15): the items a validated
 * envelope names — a message edited or deleted, a group updated, deleted or given a new owner, a
 * member added, kicked, banned, unbanned, re-scoped, joined or left — each with the platform's key,
 * its time when the envelope carries one, and the item's state after the change. Pure. The shapes
 * are the published ones (`fundamentals/webhooks-overview.mdx`, facts i12 §4; `WebhookEnvelope`
 * checks them): `message_edited`/`_deleted` carry the action message, whose `data.entities.on` is
 * the message acted on (with `editedAt`/`deletedAt`); group triggers carry `group` (`updatedAt`
 * on `group_updated`); member triggers `group` and `members` (a map of uid → user, with `scope`).
 */
import { createHash } from 'node:crypto'

import type { WebhookEnvelope, WebhookTrigger } from './webhooks.ts'

/**
 * The triggers `chatferry webhooks receive` subscribes to: every documented change to a message, a
 * group or a membership that a delta could overwrite. Users have no update trigger (the list has
 * none), so a user changed on the platform cannot be seen.
 */
export const CONFLICT_TRIGGERS = [
  'message_edited',
  'message_deleted',
  'group_updated',
  'group_deleted',
  'group_owner_transferred',
  'group_member_added',
  'group_member_joined',
  'group_member_left',
  'group_member_kicked',
  'group_member_banned',
  'group_member_unbanned',
  'group_member_scope_changed',
] as const satisfies readonly WebhookTrigger[]
export type ConflictTrigger = (typeof CONFLICT_TRIGGERS)[number]

const CONFLICT_SET: ReadonlySet<string> = new Set(CONFLICT_TRIGGERS)
export function isConflictTrigger(trigger: string): trigger is ConflictTrigger {
  return CONFLICT_SET.has(trigger)
}

/** One item a delivery says was changed. */
export interface PlatformChange {
  readonly entity: 'groups' | 'members' | 'messages'
  /** A message's platform id, a guid, `<guid>_member_<uid>`; lowercase (the platform lowercases ids). */
  readonly platformKey: string
  /** The platform's time of the change, when the envelope carries it. */
  readonly changedAt: Date | null
  /** The item's state after the change, as far as the envelope gives it (text, name, type, owner, scope). */
  readonly state: Readonly<Record<string, unknown>>
}

type Obj = Record<string, unknown>
const obj = (v: unknown): Obj => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {})
const seconds = (v: unknown): Date | null => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? new Date(v * 1000) : null)
const pick = (from: Obj, keys: readonly string[]): Obj => Object.fromEntries(keys.filter((k) => from[k] !== undefined).map((k) => [k, from[k]]))

/** The message acted on in a `message_edited`/`message_deleted` envelope. */
function messageChange(trigger: ConflictTrigger, data: Obj): PlatformChange[] {
  const on = obj(obj(obj(obj(obj(data.message).data).entities).on).entity)
  if (on.id === undefined) {
    return []
  }
  const edited = trigger === 'message_edited'
  return [
    {
      entity: 'messages',
      platformKey: String(on.id).toLowerCase(),
      changedAt: seconds(edited ? on.editedAt : on.deletedAt) ?? seconds(on.updatedAt),
      state: edited ? { text: obj(on.data).text ?? null } : { deleted: true },
    },
  ]
}

const GROUP_FIELDS = ['name', 'type', 'icon', 'description', 'owner'] as const

/** The group of a group trigger. */
function groupChange(trigger: ConflictTrigger, group: Obj): PlatformChange[] {
  return [
    {
      entity: 'groups',
      platformKey: String(group.guid).toLowerCase(),
      changedAt: trigger === 'group_updated' ? seconds(group.updatedAt) : null,
      state: trigger === 'group_deleted' ? { deleted: true } : pick(group, GROUP_FIELDS),
    },
  ]
}

/** What a member trigger did to each member it names. */
const MEMBER_CHANGE: Partial<Record<ConflictTrigger, string>> = {
  group_member_added: 'added',
  group_member_joined: 'joined',
  group_member_left: 'left',
  group_member_kicked: 'kicked',
  group_member_banned: 'banned',
  group_member_unbanned: 'unbanned',
  group_member_scope_changed: 'scope',
}

function memberChanges(trigger: ConflictTrigger, data: Obj): PlatformChange[] {
  const guid = String(obj(data.group).guid).toLowerCase()
  return Object.entries(obj(data.members)).map(([uid, member]) => ({
    entity: 'members' as const,
    platformKey: `${guid}_member_${String(obj(member).uid ?? uid).toLowerCase()}`,
    changedAt: null,
    state: { change: MEMBER_CHANGE[trigger], ...pick(obj(member), ['scope']) },
  }))
}

/** The items a validated envelope says were changed; none for a trigger that changes no item chatferry loads. */
export function platformChangesOf(envelope: WebhookEnvelope): PlatformChange[] {
  const { trigger } = envelope
  if (!isConflictTrigger(trigger)) {
    return []
  }
  const data = obj(envelope.data)
  if (trigger === 'message_edited' || trigger === 'message_deleted') {
    return messageChange(trigger, data)
  }
  if (MEMBER_CHANGE[trigger] !== undefined) {
    return memberChanges(trigger, data)
  }
  return groupChange(trigger, obj(data.group))
}

/** JSON with object keys sorted, so equal envelopes give equal text whatever their key order. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) {
    return `[${v.map(canonical).join(',')}]`
  }
  if (v !== null && typeof v === 'object') {
    const o = v as Obj
    return `{${Object.keys(o)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`)
      .join(',')}}`
  }
  return JSON.stringify(v) ?? 'null'
}

/**
 * The identity of a delivery: sha-256 of its app, webhook, trigger and data. Deliveries carry no
 * id, so a redelivery (a retry with `retryOnFailure`, the same event sent twice) is recognised by
 * its content; two changes are told apart by the times and states their data carries.
 */
export function envelopeHash(envelope: WebhookEnvelope): string {
  const { appId, webhook, trigger, data } = envelope
  return createHash('sha256').update(canonical({ appId, webhook, trigger, data })).digest('hex')
}
