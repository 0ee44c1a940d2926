/**
 * A cheap check of a `MemberImport` item that the mapping has just built, in place of
 * `MemberImport.safeParse` on the hot path: memberships are most of the rows of a large chat
 * database (65% of the 28.6M rows of the 10M-post Mattermost benchmark). The contract of
 * message-import-check.ts holds: true only for an item that the zod schema accepts and would
 * return with the same JSON; anything else (an invalid item, `groupDetails`/`userDetails`, which
 * the mapping never sends, an unknown key, keys in another order) answers false, and the caller
 * asks the schema. test/unit/target/member-import-check.test.ts holds both to the same answers.
 */
import { oneOf, platformId, seconds, shapeOf, strictObject } from './message-import-check.ts'
import { MEMBER_SCOPES, memberKey } from './schemas.ts'

const MEMBER_SHAPE = shapeOf({
  memberId: { check: (v) => typeof v === 'string' && v !== '', required: true },
  guid: { check: platformId, required: true },
  uid: { check: platformId, required: true },
  scope: { check: oneOf(MEMBER_SCOPES) },
  isBanned: { check: (v) => typeof v === 'boolean' },
  joinedAt: { check: seconds },
})

/**
 * True when `MemberImport.safeParse(item)` succeeds and returns an item of the same JSON (its
 * refinement included: `memberId` is `<guid>_member_<uid>`); false otherwise.
 */
export function isCanonicalMemberImport(item: unknown): boolean {
  return strictObject(item, MEMBER_SHAPE) && item.memberId === memberKey(item.guid as string, item.uid as string)
}
