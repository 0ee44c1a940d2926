/**
 * Verify, users, groups and members: each listed in full from the platform (deactivated users and
 * banned members included), compared id by id with the ledger's items, and each done item's listed
 * copy field by field with what its payload and its done updates say (`compare-entity-fields.ts`):
 * an item a done update removed (a group deleted, a member kicked) must be gone, not missing. A
 * listed user the ledger does not know whose uid is one of the platform's sample users
 * (src/target/sample-data.ts) is named as such: an app created elsewhere without skipSampleData.
 */
import type { ItemUpdateRow } from '../state/index.ts'
import { isSampleUid } from '../target/sample-data.ts'
import { type ChatGroup, type ChatUser, memberKey } from '../target/schemas.ts'
import { compareGroup, compareMember, compareUser, type DoneItem, type ListedMember } from './compare-entity-fields.ts'
import { expectedGroup, expectedMember, explainDifference, type ItemUpdate } from './expected-state.ts'
import { pagedList } from './paged-list.ts'
import type { VerifyRun } from './verify-run.ts'

type KeyedEntity = 'users' | 'groups' | 'members'

interface LedgerItem {
  legacyId: string
  status: string
  changed: boolean
  payload: string | null
  updates: ItemUpdate[]
}

type LedgerItems = Record<KeyedEntity, Map<string, LedgerItem>>

/** Lists users, groups and every group's members (and banned users) and compares each set with the ledger. */
export async function reconcileEntities(run: VerifyRun): Promise<void> {
  const { client, pacer, signal } = run
  const ledger = await ledgerItems(run)
  const users = new Map<string, ChatUser>()
  const uids: string[] = []
  for await (const u of pagedList(pacer, (page, perPage) => client.listUsers({ page, perPage, withDeactivated: true }, signal), 1000, signal)) {
    uids.push(u.uid)
    users.set(u.uid, users.get(u.uid) ?? u)
  }
  compareIds(run, ledger, 'users', uids, () => false)
  eachDone(ledger.users, users, (item, listed) => compareUser(run, item, listed))

  const groups = new Map<string, ChatGroup>()
  const guids: string[] = []
  for await (const g of pagedList(pacer, (page, perPage) => client.listGroups({ page, perPage }, signal), 1000, signal)) {
    guids.push(g.guid)
    groups.set(g.guid, groups.get(g.guid) ?? g)
  }
  const groupGone = (key: string) => !expectedGroup(payloadOf(ledger.groups.get(key)), ledger.groups.get(key)?.updates ?? []).present
  compareIds(run, ledger, 'groups', guids, groupGone)
  eachDone(ledger.groups, groups, (item, listed) => compareGroup(run, item, listed))

  const members = new Map<string, ListedMember>()
  const memberKeys: string[] = []
  for (const guid of new Set(guids)) {
    for (const banned of [false, true]) {
      const list = (page: number, perPage: number) =>
        banned ? client.listBannedUsers(guid, { page, perPage }, signal) : client.listGroupMembers(guid, { page, perPage }, signal)
      for await (const m of pagedList(pacer, list, 1000, signal)) {
        const key = memberKey(guid, m.uid)
        memberKeys.push(key)
        members.set(key, members.get(key) ?? { member: m, banned })
      }
    }
  }
  const memberExpected = (key: string) => expectedMember(payloadOf(ledger.members.get(key)), ledger.members.get(key)?.updates ?? [])
  const memberGone = (key: string) => {
    const guid = (payloadOf(ledger.members.get(key)).guid as string | undefined) ?? ''
    return !memberExpected(key).present || (ledger.groups.has(guid) && groupGone(guid))
  }
  compareIds(run, ledger, 'members', memberKeys, memberGone)
  eachDone(ledger.members, members, (item, listed) => compareMember(run, item, memberExpected(item.targetKey), listed))
}

/** Runs `compare` for every done item the platform lists (missing ones were reported by compareIds). */
function eachDone<T>(items: Map<string, LedgerItem>, listed: Map<string, T>, compare: (item: DoneItem, listed: T) => void): void {
  for (const [key, item] of items) {
    const found = listed.get(key)
    if (item.status !== 'done' || found === undefined || item.payload === null) {
      continue
    }
    compare({ targetKey: key, legacyId: item.legacyId, changed: item.changed, payload: payloadOf(item), updates: item.updates }, found)
  }
}

function payloadOf(item: LedgerItem | undefined): Record<string, unknown> {
  if (item?.payload === null || item?.payload === undefined) {
    return {}
  }
  return JSON.parse(item.payload) as Record<string, unknown>
}

/** The ledger's users, groups and members by target key, with their updates; counts the done ones. */
async function ledgerItems(run: VerifyRun): Promise<LedgerItems> {
  const ledger: LedgerItems = { users: new Map(), groups: new Map(), members: new Map() }
  for (const r of await run.lookups.itemStates(run.jobId)) {
    ledger[r.entity].set(r.target_key, { legacyId: r.legacy_id, status: r.status, changed: r.changed, payload: r.payload, updates: [] })
    if (r.status === 'done') {
      run.entities[r.entity].ledgerDone++
    }
  }
  for (const entity of ['users', 'groups', 'members'] as const) {
    const rows: ItemUpdateRow[] = await run.lookups.itemUpdates(run.jobId, entity)
    for (const u of rows) {
      ledger[entity].get(u.target_key)?.updates.push({ kind: u.kind, status: u.status })
    }
  }
  return ledger
}

/**
 * The platform's keys of one entity against the ledger's: duplicates, unexpected, missing. `gone`
 * names done items a done update removed (they must be absent: listed, they are `unexpected`).
 */
function compareIds(run: VerifyRun, ledger: LedgerItems, entity: KeyedEntity, onPlatform: readonly string[], gone: (key: string) => boolean): void {
  const { entities, add } = run
  const seen = new Set<string>()
  for (const key of onPlatform) {
    if (seen.has(key)) {
      entities[entity].duplicates++
      add({
        entity,
        kind: 'duplicate',
        targetKey: key,
        legacyId: ledger[entity].get(key)?.legacyId ?? null,
        field: null,
        expected: 1,
        actual: 2,
        explained: false,
        note: 'listed twice by the platform',
      })
      continue
    }
    seen.add(key)
    const item = ledger[entity].get(key)
    if (item?.status === 'done' && !gone(key)) {
      continue
    }
    entities[entity].unexpected++
    add(unexpected(entity, key, item, item?.status === 'done'))
  }
  for (const [key, item] of ledger[entity]) {
    if (item.status !== 'done' || seen.has(key)) {
      continue
    }
    if (gone(key)) {
      continue
    }
    entities[entity].missing++
    const why = explainDifference(
      item.updates.filter((u) => /\.(add|reactivate)$/.test(u.kind)),
      false,
      'done in the ledger, absent on the platform',
      run.advice,
    )
    add({
      entity,
      kind: 'missing',
      targetKey: key,
      legacyId: item.legacyId,
      field: null,
      expected: key,
      actual: null,
      explained: why.explained,
      note: why.note,
    })
  }
  entities[entity].platform = seen.size
}

/** A listed key the ledger does not call present: unknown, not loaded yet, or removed by a done update. */
function unexpected(entity: KeyedEntity, key: string, item: LedgerItem | undefined, removed: boolean) {
  const base = { entity, kind: 'unexpected' as const, targetKey: key, field: null, expected: null, actual: key }
  if (item === undefined && entity === 'users' && isSampleUid(key)) {
    return {
      ...base,
      legacyId: null,
      explained: false,
      note: "the platform's sample user, not from the source: its app was created without skipSampleData: true; delete it (DELETE /users/{uid}, permanent: true) for the app to hold only the migrated data",
    }
  }
  if (item === undefined) {
    return { ...base, legacyId: null, explained: false, note: 'on the platform, unknown to the ledger' }
  }
  if (removed) {
    const done = item.updates.filter((u) => u.status === 'done' && /\.(delete|kick)$/.test(u.kind)).map((u) => u.kind)
    return {
      ...base,
      legacyId: item.legacyId,
      explained: false,
      note: `removed in the ledger (${[...new Set(done)].join(', ') || 'removal'} done), still on the platform`,
    }
  }
  const explained = item.status === 'planned' || item.status === 'sent'
  return {
    ...base,
    legacyId: item.legacyId,
    explained,
    note: explained ? `the ledger has it ${item.status}: the load has not finished` : `on the platform, but ${item.status} in the ledger`,
  }
}
