/**
 * Who made a change a webhook delivery reports: chatferry itself (the echo of an update the lane
 * sent, or of the state chatferry loaded) or someone on the platform. The platform delivers the
 * changes chatferry's own chat calls make too (`group_updated` after its `PUT /groups/{guid}`,
 * `message_edited` after its edit, …), and an actor (`by`, `editedBy`) does not tell them apart:
 * chatferry edits a message on behalf of its sender, as the sender would. So a change is
 * chatferry's when the item's state after it is one chatferry wrote: an update it sent (status
 * `sent` or `done`, recorded before the call, so before any echo arrives) of the matching kind whose
 * body agrees with the envelope, or the item's stored payload (what it loaded). Everything else is a
 * change made on the platform. Pure.
 */
import { storedPayload } from './changed-items.ts'

/** What chatferry wrote to the item a delivery names. */
export interface OwnWrites {
  /** The stored payload (null: unknown, or its removal was planned). */
  readonly payload: Readonly<Record<string, unknown>> | null
  /** Updates chatferry sent to it, newest first. */
  readonly updates: readonly { kind: string; body: Readonly<Record<string, unknown>> }[]
}

type Obj = Readonly<Record<string, unknown>>

/** The text an edit sets (`text` or `data.text`). */
function textOf(body: Obj): unknown {
  const data = (body.data ?? {}) as Obj
  return body.text ?? data.text
}

/** True when every field of `fields` that both carry is equal (and at least one is carried). */
function agrees(a: Obj, b: Obj, fields: readonly string[]): boolean {
  const shared = fields.filter((f) => a[f] !== undefined && b[f] !== undefined)
  return shared.length > 0 && shared.every((f) => a[f] === b[f])
}

const GROUP_FIELDS = ['name', 'type', 'icon', 'description', 'owner']

/** The update kinds whose echo each trigger is, and whether the envelope's state must agree with the body. */
const ECHO_OF: Record<string, { kinds: readonly string[]; agree?: (state: Obj, body: Obj) => boolean }> = {
  message_edited: { kinds: ['message.edit'], agree: (s, b) => s.text === textOf(b) },
  message_deleted: { kinds: ['message.delete'] },
  group_updated: { kinds: ['group.update'], agree: (s, b) => agrees(s, b, GROUP_FIELDS) },
  group_owner_transferred: { kinds: ['group.update'], agree: (s, b) => s.owner === b.owner },
  group_deleted: { kinds: ['group.delete'] },
  group_member_added: { kinds: ['member.add'], agree: (s, b) => s.scope === undefined || s.scope === b.scope },
  group_member_joined: { kinds: ['member.add'] },
  group_member_left: { kinds: ['member.kick'] },
  group_member_kicked: { kinds: ['member.kick'] },
  group_member_banned: { kinds: ['member.ban'] },
  group_member_unbanned: { kinds: ['member.unban'] },
  group_member_scope_changed: { kinds: ['member.scope'], agree: (s, b) => s.scope === b.scope },
}

/** Whether the state equals what chatferry loaded (the stored payload): no divergence from chatferry's own write. */
function matchesPayload(trigger: string, state: Obj, payload: Obj | null): boolean {
  if (payload === null) {
    return false
  }
  switch (trigger) {
    case 'message_edited':
      return state.text !== undefined && state.text === textOf(payload)
    case 'group_updated':
    case 'group_owner_transferred':
      // The import carries no description; an owner only when the source named one.
      return (
        ['name', 'type', 'icon'].every((f) => (state[f] ?? null) === (payload[f] ?? null)) &&
        (payload.owner === undefined || state.owner === payload.owner)
      )
    case 'group_member_added':
    case 'group_member_joined':
    case 'group_member_scope_changed':
      return (payload.scope ?? 'participant') === (state.scope ?? 'participant') && payload.isBanned !== true
    default:
      return false
  }
}

/** `chatferry` when the delivery is the echo of chatferry's own write, else `platform`. */
export function originOf(trigger: string, state: Obj, own: OwnWrites | undefined): 'platform' | 'chatferry' {
  if (own === undefined) {
    return 'platform'
  }
  const echo = ECHO_OF[trigger]
  if (echo !== undefined && own.updates.some((u) => echo.kinds.includes(u.kind) && (echo.agree === undefined || echo.agree(state, u.body)))) {
    return 'chatferry'
  }
  return matchesPayload(trigger, state, own.payload) ? 'chatferry' : 'platform'
}

/** The stored rows as {@link OwnWrites}. */
export function ownWritesOf(row: { payload: string | null; updates: readonly { kind: string; body: string }[] }): OwnWrites {
  return {
    payload: row.payload === null ? null : storedPayload(row.payload),
    updates: row.updates.map((u) => ({ kind: u.kind, body: storedPayload(u.body) })),
  }
}
