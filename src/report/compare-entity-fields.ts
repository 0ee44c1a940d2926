/**
 * Verify, users, groups and members field by field: each done item's listed copy against what its
 * payload and its done updates say the platform should show (`expected-state.ts`) — users' name,
 * avatar, link, role, metadata and deactivation; groups' name, type, icon, metadata and owner;
 * members' scope and ban. A difference is a `field` mismatch with the legacy id and target key,
 * explained only while an update of the item waits (`explainDifference`).
 */
import { storableText } from '../state/index.ts'
import type { ChatGroup, ChatMember, ChatUser } from '../target/schemas.ts'
import { expectedGroup, type ExpectedMember, expectedUser, explainDifference, type ItemUpdate, sameValue } from './expected-state.ts'
import { changedOnPlatformNote } from './foreign-items.ts'
import type { VerifyRun } from './verify-run.ts'

/** A done item of the ledger as verify holds it. */
export interface DoneItem {
  readonly targetKey: string
  readonly legacyId: string
  readonly changed: boolean
  readonly payload: Readonly<Record<string, unknown>>
  readonly updates: readonly ItemUpdate[]
}

type KeyedEntity = 'users' | 'groups' | 'members'

/** Adds one `field` mismatch per differing field of `expected` vs `actual`. */
function compareFields(
  run: VerifyRun,
  entity: KeyedEntity,
  item: DoneItem,
  expected: Record<string, unknown>,
  actual: Record<string, unknown>,
): void {
  for (const [field, want] of Object.entries(expected)) {
    const got = actual[field] === undefined ? null : actual[field]
    if (sameValue(want, got)) {
      continue
    }
    const why = explainDifference(
      item.updates,
      item.changed,
      changedOnPlatformNote(`differs from the ledger's payload and the updates applied to ${entity === 'members' ? 'the membership' : 'it'}`),
      run.advice,
    )
    run.add({
      entity,
      kind: 'field',
      targetKey: item.targetKey,
      legacyId: item.legacyId,
      field,
      expected: storable(want),
      actual: storable(got),
      explained: why.explained,
      note: why.note,
    })
  }
}

export function compareUser(run: VerifyRun, item: DoneItem, listed: ChatUser): void {
  const e = expectedUser(item.payload, item.updates)
  compareFields(
    run,
    'users',
    item,
    { ...e },
    {
      name: listed.name,
      avatar: listed.avatar,
      link: listed.link,
      role: listed.role ?? 'default',
      metadata: listed.metadata,
      deactivated: listed.deactivatedAt !== undefined && listed.deactivatedAt !== null,
    },
  )
}

export function compareGroup(run: VerifyRun, item: DoneItem, listed: ChatGroup): void {
  const { fields } = expectedGroup(item.payload, item.updates)
  compareFields(
    run,
    'groups',
    item,
    { ...fields },
    { name: listed.name, type: listed.type, icon: listed.icon, metadata: listed.metadata, owner: listed.owner },
  )
}

/** A listed membership: its member object and which list it came from. */
export interface ListedMember {
  readonly member: ChatMember
  readonly banned: boolean
}

export function compareMember(run: VerifyRun, item: DoneItem, expected: ExpectedMember, listed: ListedMember): void {
  compareFields(
    run,
    'members',
    item,
    { banned: expected.banned, ...(expected.banned ? {} : { scope: expected.scope }) },
    {
      banned: listed.banned,
      scope: listed.member.scope ?? 'participant',
    },
  )
}

/** A compared value as a report can store it (strings escaped; objects as they are). */
function storable(v: unknown): unknown {
  return typeof v === 'string' ? storableText(v) : v
}
