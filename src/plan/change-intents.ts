/**
 * What a change to an item already on the platform asks of it: `changeIntents(entity, before,
 * after, policies)` compares the payload the platform has (`before`; null when its removal was
 * planned by an earlier delta) with the new one (`after`, or the skip that replaced it) and returns
 * zero or more update intents, each with its policy (`changes:`) and a reason naming the fields.
 * Pure: the ledger records the intents (`store.updatePlan`), the update lane sends them.
 *
 * A change the platform cannot take through its chat interface (a message's sentAt or receiver, a
 * creation time, …) is a `*.unchangeable` intent, always reported (ignored when the entity's
 * policy is `ignore`), never dropped silently. Fields that describe other entities
 * (`senderUserDetails`, `groupDetails`, …) are not compared: their own rows carry their changes.
 * See mappings/README.md "Changes after the bulk load" for how `before` is kept. The types the
 * entities' comparisons share are in change-types.ts.
 */
import type { LegacyEntity } from '../model/index.ts'
import type { ChangeIntent, ChangePolicies, NowSkipped, Payload } from './change-types.ts'
import { groupChanges } from './group-changes.ts'
import { memberChanges } from './member-changes.ts'
import { messageChanges } from './message-changes.ts'
import { userChanges } from './user-changes.ts'

export type { ChangeIntent, ChangePolicies, NowSkipped, Payload } from './change-types.ts'

/** The intents a change of one loaded item asks for (none when nothing the platform shows changed). */
export function changeIntents(entity: LegacyEntity, before: Payload | null, after: Payload | NowSkipped, policies: ChangePolicies): ChangeIntent[] {
  switch (entity) {
    case 'users':
      return userChanges(before, after, policies)
    case 'groups':
      return groupChanges(before, after, policies)
    case 'members':
      return memberChanges(before, after, policies)
    case 'messages':
      return messageChanges(before, after, policies)
  }
}

/**
 * Whether the item's stored payload becomes the new one: yes when nothing the platform shows
 * changed, or when some change is applied; no when every change is only reported or ignored, so the
 * platform's state stays the stored one and a later change is compared with it (a reported change
 * is seen again, and applied once its policy becomes `apply`).
 */
export function advancesPayload(intents: readonly ChangeIntent[]): boolean {
  return intents.length === 0 || intents.some((i) => i.policy === 'apply')
}
