/**
 * What verify says of items on the platform that no chatferry command can fix: items this job did
 * not create (unknown to the ledger, or skipped by a policy, so never sent), second copies of a
 * message, and fields changed on the platform. chatferry removes only what its ledger calls loaded, and never guesses which of two
 * copies is the one to keep, so each note says so plainly, names what to check and the platform
 * call that removes the item by hand. The platform's paths are its documented delete calls.
 */
import type { LegacyEntity } from '../model/index.ts'

/** The platform's call that deletes one item of an entity (cometchat/docs `chat-apis.json`). */
const DELETE_CALL: Record<LegacyEntity, string> = {
  users: 'DELETE /users/{uid} with permanent: true',
  groups: 'DELETE /groups/{guid}',
  members: 'DELETE /groups/{guid}/members/{uid}',
  messages: 'DELETE /messages/{id} with permanent: true',
}

const NO_COMMAND = 'no chatferry command removes what this job did not load'

/** An item the ledger has never heard of. */
export function unknownItemNote(entity: LegacyEntity, detail = ''): string {
  return (
    `on the platform, unknown to the ledger${detail}: this job did not create it (another job on this app, a person, an integration or a script did); ` +
    `${NO_COMMAND}. Check who created it; if it must go, delete it on the platform (${DELETE_CALL[entity]})`
  )
}

/** An item the ledger holds as skipped by a policy: never sent by this job. */
export function skippedButPresentNote(entity: LegacyEntity): string {
  return (
    `on the platform, but skipped in the ledger (a policy dropped it, so this job never sent it): something else created it; ` +
    `${NO_COMMAND}. Check who created it and whether the policy should send it; if it must go, delete it on the platform (${DELETE_CALL[entity]})`
  )
}

/** A rejected item without a payload (a row that never mapped): nothing can be sent for it. */
export function rejectedWithoutPayloadNote(entity: LegacyEntity): string {
  return (
    `on the platform, but rejected in the ledger before it had a payload (its row never mapped), so this job never sent it; ` +
    `${NO_COMMAND}. Check who created it; if it must go, delete it on the platform (${DELETE_CALL[entity]})`
  )
}

/** A second copy of a message on the platform. */
export function duplicateMessageNote(copyId: string, sameBy: string): string {
  return (
    `message ${copyId} is a second copy (same ${sameBy}); no chatferry command deletes a copy (it cannot tell which one people replied to or reacted to). ` +
    `Check both; delete the one to drop on the platform (${DELETE_CALL.messages.replace('{id}', copyId)})`
  )
}

/** A user, group or member the platform lists twice. */
export const LISTED_TWICE_NOTE =
  "listed twice by the platform's list (its ids are unique, so this is the listing, not the data): run verify again; if it stays, the platform's paging is at fault, not the migration, and no chatferry command changes it"

/**
 * A loaded item's field that differs from what chatferry sent and applied, with no update to
 * explain it: changed on the platform by someone else.
 */
export function changedOnPlatformNote(what: string): string {
  return (
    `${what}: changed on the platform after chatferry wrote it; no chatferry command restores it (a loaded item's fields are sent again only when the source changes them). ` +
    'Check who changed it there; `chatferry webhooks receive` records such changes from now on (changes.conflicts decides which side wins)'
  )
}
