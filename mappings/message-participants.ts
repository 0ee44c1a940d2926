/**
 * Sender and receiver of `mapMessage`, with the `missingUsers` policy (an unknown sender or
 * one-to-one receiver becomes a placeholder user, or rejects the message) and the dependencies (a
 * sender, receiver or group that a policy skipped skips the message too). An unknown group is
 * always a rejection; so is a group whose source row was rejected, naming that row's reason. The system user of system messages is in `message-system.ts`.
 */
import { LIMITS } from '../src/target/schemas.ts'
import { compact, cutText, type Outcomes, Rejection, Skip, validated } from './common.ts'
import { stableHash, toPlatformId } from './ids.ts'
import type { MessageScope } from './message-scope.ts'
import { systemSender } from './message-system.ts'
import { isSkippedRef, type MappedItem, type MappingContext } from './types.ts'

/** The sender's uid: the system user's for a system message (`systemMessages.mode: as-user`). */
export function senderOf(s: MessageScope, extraItems: MappedItem<'users'>[]): string {
  return s.system ? systemSender(s, extraItems) : participant(s.record.senderId, 'senderId', 'sender', s.ctx, s.out, extraItems)
}

/** The receiver's uid or guid. */
export function receiverOf({ record, ctx, out }: MessageScope, extraItems: MappedItem<'users'>[]): string {
  if (record.receiverType === 'group') {
    if (!record.receiverId) {
      throw new Rejection('receiverId', 'receiver is missing')
    }
    const g = ctx.group(record.receiverId)
    if (g === undefined) {
      throw new Rejection('receiverId', `unknown group ${JSON.stringify(record.receiverId)}`)
    }
    if (isSkippedRef(g) && g.rejected !== undefined) {
      throw new Rejection('receiverId', `its group ${JSON.stringify(record.receiverId)} was rejected (${g.rejected})`)
    }
    if (isSkippedRef(g)) {
      throw new Skip('dependencies', `group-skipped-by-${g.policy}`, `its group was skipped (${g.policy})`)
    }
    return g.guid
  }
  if (record.receiverType === 'user') {
    return participant(record.receiverId, 'receiverId', 'receiver', ctx, out, extraItems)
  }
  throw new Rejection('receiverType', `unknown receiver type ${JSON.stringify(record.receiverType)}`)
}

/** Resolves a sender or one-to-one receiver, creating a placeholder when the policy allows. */
export function participant(
  legacyId: string,
  field: 'senderId' | 'receiverId',
  role: 'sender' | 'receiver',
  ctx: MappingContext,
  out: Outcomes,
  extraItems: MappedItem<'users'>[],
): string {
  if (typeof legacyId !== 'string' || legacyId === '') {
    throw new Rejection(field, `${role} is missing`)
  }
  const u = ctx.user(legacyId)
  if (isSkippedRef(u) && u.rejected !== undefined) {
    throw new Rejection(field, `its ${role} ${JSON.stringify(legacyId)} was rejected (${u.rejected})`)
  }
  if (isSkippedRef(u)) {
    throw new Skip('dependencies', `${role}-skipped-by-${u.policy}`, `its ${role} was skipped (${u.policy})`)
  }
  if (u !== undefined) {
    return u.uid
  }
  const mp = ctx.policies.missingUsers
  if (mp.mode === 'reject') {
    throw new Rejection(field, `unknown user ${JSON.stringify(legacyId)}`, 'missingUsers')
  }
  const uid = ctx.ids.claim('user', legacyId, placeholderUid(legacyId, mp.uidPrefix))
  const name = cutText(mp.name.replaceAll('{id}', legacyId.isWellFormed() ? legacyId : toPlatformId(legacyId)), LIMITS.NAME_MAX)
  extraItems.push({
    entity: 'users',
    targetKey: uid,
    payload: validated(
      'users',
      compact({
        uid,
        name,
        tags: mp.tag !== '' ? [mp.tag] : undefined,
        metadata: { [ctx.policies.legacyMetadata.key]: { id: legacyId, placeholder: true } },
      }),
    ),
    reason: 'placeholder',
  })
  out.add('missingUsers', `${role}-placeholder`)
  return uid
}

/** The deterministic uid of the placeholder for an unknown legacy user: `<prefix><hash>`. */
export function placeholderUid(legacyId: string, prefix = 'placeholder-'): string {
  return `${prefix}${stableHash(legacyId)}`
}
