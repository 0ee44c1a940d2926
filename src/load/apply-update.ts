/**
 * One update → one chat call (the table in /work/notes/i13-design.md, README "Update lane"): the
 * kind picks the client method, the target key gives the uid / guid / member, the recorded body the
 * desired state. The answer is a verdict; a failure of the request throws the client's
 * PlatformError (the lane decides what a failure means), and a body the client refuses before
 * sending throws a TypeError naming the field.
 */
import { LIST_OF_SCOPE } from '../target/chat-write-schemas.ts'
import type { PlatformClient } from '../target/client.ts'
import { PlatformError } from '../target/errors.ts'
import type { MemberScope } from '../target/schemas.ts'

/** An update ready to apply: what the ledger recorded, its body parsed, a message's platform id resolved. */
export interface ResolvedUpdate {
  readonly kind: string
  readonly targetKey: string
  readonly body: Readonly<Record<string, unknown>>
  /** The platform's message id (messages only). */
  readonly messageId?: string | undefined
  /**
   * Messages: edit or delete as the app (no `onBehalfOf`), because the sender is deactivated on the
   * platform (a deactivated `onBehalfOf` answers `ERR_UID_NOT_FOUND`; the app's edit is documented).
   */
  readonly asApp?: boolean
}

/**
 * `applied`: the platform took the call (HTTP 2xx); `unchanged`: it answered 2xx but said it left
 * the item as it was (a deactivation of a deactivated user) — the lane checks the state then;
 * `refused`: a per-item refusal inside a 2xx (add-members answers per uid).
 */
export type ApplyVerdict =
  | { readonly outcome: 'applied' }
  | { readonly outcome: 'unchanged' }
  | { readonly outcome: 'refused'; readonly code: string; readonly message: string }

/** The update kinds the lane can apply; any other planned kind is rejected (`UNSUPPORTED_UPDATE_KIND`). */
export const APPLIED_KINDS = [
  'user.update',
  'user.deactivate',
  'user.reactivate',
  'group.update',
  'group.delete',
  'member.add',
  'member.scope',
  'member.kick',
  'member.ban',
  'member.unban',
  'message.edit',
  'message.delete',
] as const

/** `<guid>_member_<uid>` → its parts (the body's `guid`/`uid` win when it carries them). */
export function memberOf(u: Pick<ResolvedUpdate, 'targetKey' | 'body'>): { guid: string; uid: string } {
  const at = u.targetKey.indexOf('_member_')
  const guid = typeof u.body.guid === 'string' ? u.body.guid : at < 0 ? '' : u.targetKey.slice(0, at)
  const uid = typeof u.body.uid === 'string' ? u.body.uid : at < 0 ? '' : u.targetKey.slice(at + '_member_'.length)
  if (guid === '' || uid === '') {
    throw new TypeError(`the member key ${JSON.stringify(u.targetKey)} is not <guid>_member_<uid>`)
  }
  return { guid, uid }
}

/** The scope a member update wants. */
export function scopeOf(body: Readonly<Record<string, unknown>>): MemberScope {
  const scope = body.scope
  if (scope !== 'admin' && scope !== 'moderator' && scope !== 'participant') {
    throw new TypeError(`scope: expected admin, moderator or participant, got ${JSON.stringify(scope)}`)
  }
  return scope
}

/** The sender a message update acts on behalf of. */
export function senderOf(body: Readonly<Record<string, unknown>>): string {
  if (typeof body.sender !== 'string' || body.sender === '') {
    throw new TypeError('sender: a message update needs the sender it acts on behalf of')
  }
  return body.sender
}

/**
 * The body of `PUT /messages/{id}` from a `message.edit` update: `{data: {text?, metadata?}, tags?}`
 * (a top-level `text` or `metadata` goes into `data`; `sender` is the onBehalfOf header, not the body).
 */
export function messageEditBody(body: Readonly<Record<string, unknown>>): {
  data?: { text?: string; metadata?: Record<string, unknown> }
  tags?: string[]
} {
  const given = (body.data ?? {}) as Record<string, unknown>
  const text = typeof body.text === 'string' ? body.text : typeof given.text === 'string' ? given.text : undefined
  const metadata = (body.metadata ?? given.metadata) as Record<string, unknown> | undefined
  const data = { ...(text !== undefined ? { text } : {}), ...(metadata !== undefined ? { metadata } : {}) }
  return { ...(Object.keys(data).length > 0 ? { data } : {}), ...(Array.isArray(body.tags) ? { tags: body.tags as string[] } : {}) }
}

/** The body without the lane's own fields (what a user or group update sends). */
function callBody(body: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const { guid: _g, uid: _u, sender: _s, ...rest } = body
  return rest
}

function messageId(u: ResolvedUpdate): string {
  if (u.messageId === undefined) {
    throw new TypeError(`the message ${u.targetKey} has no platform id`)
  }
  return u.messageId
}

/** Sends the update's one call and says what the platform answered. */
export async function applyUpdate(client: PlatformClient, u: ResolvedUpdate, signal?: AbortSignal): Promise<ApplyVerdict> {
  const applied: ApplyVerdict = { outcome: 'applied' }
  switch (u.kind) {
    case 'user.update':
      await client.updateUser(u.targetKey, callBody(u.body), signal)
      return applied
    case 'user.deactivate':
      return (await client.deactivateUsers([u.targetKey], signal)).changed.length > 0 ? applied : { outcome: 'unchanged' }
    case 'user.reactivate':
      return (await client.reactivateUsers([u.targetKey], signal)).changed.length > 0 ? applied : { outcome: 'unchanged' }
    case 'group.update':
      await client.updateGroup(u.targetKey, callBody(u.body), {}, signal)
      return applied
    case 'group.delete':
      await client.deleteGroup(u.targetKey, signal)
      return applied
    case 'member.add':
      return addMember(client, u, signal)
    case 'member.scope': {
      const { guid, uid } = memberOf(u)
      await client.changeMemberScope(guid, uid, scopeOf(u.body), signal)
      return applied
    }
    case 'member.kick': {
      const { guid, uid } = memberOf(u)
      await client.kickMember(guid, uid, signal)
      return applied
    }
    case 'member.ban': {
      const { guid, uid } = memberOf(u)
      await client.banMember(guid, uid, signal)
      return applied
    }
    case 'member.unban': {
      const { guid, uid } = memberOf(u)
      await client.unbanMember(guid, uid, signal)
      return applied
    }
    case 'message.edit':
      await client.updateMessage(messageId(u), messageEditBody(u.body), u.asApp === true ? undefined : senderOf(u.body), signal)
      return applied
    case 'message.delete':
      await client.deleteMessage(messageId(u), u.asApp === true ? undefined : senderOf(u.body), { permanent: false }, signal)
      return applied
    default:
      throw new TypeError(`the update kind ${JSON.stringify(u.kind)} is not applied through the chat interface`)
  }
}

/** `POST /groups/{guid}/members` with one uid in the list of its scope; its per-uid result is the verdict. */
async function addMember(client: PlatformClient, u: ResolvedUpdate, signal?: AbortSignal): Promise<ApplyVerdict> {
  const { guid, uid } = memberOf(u)
  const res = await client.addMembers(guid, { [LIST_OF_SCOPE[scopeOf(u.body)]]: [uid] }, signal)
  const r = res.results.get(uid.toLowerCase())
  if (r === undefined) {
    // Not in the answer: its fate is unknown, like a lost answer (the lane checks before sending again).
    throw new PlatformError({
      operation: 'chat.addMembers',
      kind: 'invalid-response',
      status: 200,
      code: 'INVALID_RESPONSE',
      message: `the answer does not mention ${uid}`,
    })
  }
  return r.ok ? { outcome: 'applied' } : { outcome: 'refused', code: r.code, message: r.message }
}
