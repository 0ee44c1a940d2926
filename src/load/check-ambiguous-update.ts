/**
 * Whether the platform already holds the state an update wants. The lane asks before it sends an
 * update again whose earlier call may have reached the platform — found `sent` with an expired
 * lease (a crash between the call and its settlement), or after a timeout, a 5xx or a lost
 * connection — and before it rejects a refusal (a deactivation of a deactivated user is refused by
 * some calls and "unchanged" by others). Yes → the update is settled done without a call; no → it
 * is sent (again). So a crash never applies an update twice and never loses one.
 *
 * The comparison is strict: only an exact match of every field the update sets counts, so when in
 * doubt the update is sent again (every call here is idempotent in its effect; the check is about
 * not sending twice, never about skipping a needed call).
 */
import { isDeepStrictEqual } from 'node:util'

import type { PlatformClient } from '../target/client.ts'
import { PlatformError } from '../target/errors.ts'
import { memberOf, messageEditBody, type ResolvedUpdate } from './apply-update.ts'

const USER_FIELDS = ['name', 'avatar', 'link', 'role', 'statusMessage', 'metadata', 'tags'] as const
/** A group's password cannot be read back: it is not compared. */
const GROUP_FIELDS = ['name', 'type', 'icon', 'description', 'metadata', 'tags', 'owner'] as const

/** Tags compare as sets; everything else exactly. */
function same(field: string, have: unknown, want: unknown): boolean {
  if (field === 'tags' && Array.isArray(have) && Array.isArray(want)) {
    return isDeepStrictEqual([...(have as string[])].sort(), [...(want as string[])].sort())
  }
  return isDeepStrictEqual(have, want)
}

/** Every field the body sets is equal on the platform's record, and every field it unsets is absent. */
export function recordMatches(
  record: Readonly<Record<string, unknown>>,
  body: Readonly<Record<string, unknown>>,
  fields: readonly string[],
): boolean {
  for (const f of fields) {
    if (body[f] !== undefined && !same(f, record[f], body[f])) {
      return false
    }
  }
  const unset = Array.isArray(body.unset) ? (body.unset as string[]) : []
  return unset.every((f) => record[f] === undefined || record[f] === null || record[f] === '')
}

/** A message holds an edit's text, metadata and tags. */
export function messageMatches(
  message: { data?: Record<string, unknown> | undefined; tags?: string[] | undefined },
  body: Readonly<Record<string, unknown>>,
): boolean {
  const want = messageEditBody(body)
  const data = message.data ?? {}
  if (want.data?.text !== undefined && data.text !== want.data.text) {
    return false
  }
  if (want.data?.metadata !== undefined && !isDeepStrictEqual(data.metadata, want.data.metadata)) {
    return false
  }
  return want.tags === undefined || same('tags', message.tags ?? [], want.tags)
}

function notFound(err: unknown): boolean {
  return err instanceof PlatformError && err.kind === 'http' && err.status === 404
}

/** Reads `read()`; a 404 answers `gone` instead of throwing. */
async function orGone<T, G>(read: () => Promise<T>, gone: G): Promise<T | G> {
  try {
    return await read()
  } catch (err) {
    if (notFound(err)) {
      return gone
    }
    throw err
  }
}

/** Whether the platform already holds what `u` wants (reads only; a failed read throws the client's error). */
export async function platformHasUpdate(client: PlatformClient, u: ResolvedUpdate, signal?: AbortSignal): Promise<boolean> {
  switch (u.kind) {
    case 'user.update': {
      const user = await client.findUser(u.targetKey, signal)
      return user !== undefined && recordMatches(user, u.body, USER_FIELDS)
    }
    case 'user.deactivate':
      return (await client.findUser(u.targetKey, signal))?.deactivatedAt !== undefined
    case 'user.reactivate': {
      const user = await client.findUser(u.targetKey, signal)
      return user !== undefined && user.deactivatedAt === undefined
    }
    case 'group.update': {
      const group = await orGone(() => client.getGroup(u.targetKey, signal), undefined)
      return group !== undefined && recordMatches(group, u.body, GROUP_FIELDS)
    }
    case 'group.delete':
      return (await orGone(() => client.getGroup(u.targetKey, signal), undefined)) === undefined
    case 'message.edit': {
      const message = await orGone(() => client.getMessage(u.messageId ?? '', signal), undefined)
      return message !== undefined && message.deletedAt === undefined && messageMatches(message, u.body)
    }
    case 'message.delete': {
      const message = await orGone(() => client.getMessage(u.messageId ?? '', signal), undefined)
      return message === undefined || message.deletedAt !== undefined
    }
    default:
      return memberHas(client, u, signal)
  }
}

async function memberHas(client: PlatformClient, u: ResolvedUpdate, signal?: AbortSignal): Promise<boolean> {
  const { guid, uid } = memberOf(u)
  const at = await orGone(() => client.findGroupMember(guid, uid, signal), { state: 'none' as const })
  switch (u.kind) {
    case 'member.add':
    case 'member.scope':
      return at.state === 'member' && at.member.scope === u.body.scope
    case 'member.kick':
      return at.state !== 'member'
    case 'member.ban':
      return at.state === 'banned'
    case 'member.unban':
      return at.state !== 'banned'
    default:
      return false
  }
}
