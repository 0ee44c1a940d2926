/**
 * The `systemMessages` policy of `mapMessage`: a system message (join, leave, rename…) is
 * skipped, or sent as a text message from the configured system user, created once as an extra
 * item. Its text, or `[<kind>]` when it has none, is set in `message-content.ts`.
 */
import { Skip, validated } from './common.ts'
import type { MessageScope } from './message-scope.ts'
import type { MappedItem } from './types.ts'

/** The legacy id under which the configured system user's uid is claimed in the id registry. */
export const SYSTEM_USER_LEGACY_ID = '@chatferry/system-user'

export function skipSystemMessage({ system, record, ctx }: MessageScope): void {
  if (system && ctx.policies.systemMessages.mode === 'skip') {
    throw new Skip('systemMessages', 'skipped', `system message ${record.systemKind} (systemMessages.mode: skip)`)
  }
}

/** `systemMessages.mode: as-user`: the system user's uid; the legacy kind and sender go into chatferry's metadata. */
export function systemSender({ record, ctx, out, own }: MessageScope, extraItems: MappedItem<'users'>[]): string {
  const su = ctx.policies.systemMessages.systemUser
  const sender = ctx.ids.claim('user', SYSTEM_USER_LEGACY_ID, su.uid)
  extraItems.push({
    entity: 'users',
    targetKey: sender,
    payload: validated('users', { uid: sender, name: su.name, metadata: { [ctx.policies.legacyMetadata.key]: { systemUser: true } } }),
    reason: 'system-user',
  })
  own.systemKind = record.systemKind
  if (record.senderId) {
    own.sender = record.senderId
  }
  out.add('systemMessages', 'sent-as-user')
  return sender
}
