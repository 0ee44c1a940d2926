/**
 * The intents of done items whose legacy row vanished from the source (the key-set comparison of
 * `store.updatePlan.recordVanished`), by `changes.vanished.<entity>`: `delete` removes it on the
 * platform (users: deactivate, groups: delete, members: kick, messages: delete on behalf of the
 * sender), `report` only records it.
 */
import type { LegacyEntity } from '../model/index.ts'
import { type UpdateIntent, type UpdateKind, VANISHED_REASON, type VanishedItemRow } from '../state/index.ts'
import type { ChangesConfig } from './changes-config.ts'

const REMOVAL: Record<LegacyEntity, UpdateKind> = {
  users: 'user.deactivate',
  groups: 'group.delete',
  members: 'member.kick',
  messages: 'message.delete',
}

export function vanishedIntents(entity: LegacyEntity, items: readonly VanishedItemRow[], changes: ChangesConfig): UpdateIntent[] {
  const policy = changes.vanished[entity] === 'delete' ? 'apply' : 'report'
  return items.map((item) => ({
    kind: REMOVAL[entity],
    legacyId: item.legacyId,
    targetKey: item.targetKey,
    body: entity === 'messages' ? { sender: senderOf(item.payload) } : {},
    policy,
    reason: VANISHED_REASON,
  }))
}

function senderOf(payload: string | null): unknown {
  try {
    return payload === null ? undefined : (JSON.parse(payload) as { sender?: unknown }).sender
  } catch {
    return undefined
  }
}
