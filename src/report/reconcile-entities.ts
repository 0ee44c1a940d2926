/**
 * Verify, users, groups and members: each listed in full from the platform (deactivated users and
 * banned members included) and compared id by id with the ledger's items.
 */
import { memberKey } from '../target/schemas.ts'
import { pagedList } from './chat-pacer.ts'
import type { VerifyRun } from './verify-run.ts'

type KeyedEntity = 'users' | 'groups' | 'members'

interface LedgerItem {
  legacyId: string
  status: string
  changed: boolean
}

type LedgerItems = Record<KeyedEntity, Map<string, LedgerItem>>

/** Lists users, groups and every group's members (and banned users) and compares each set with the ledger. */
export async function reconcileEntities(run: VerifyRun): Promise<void> {
  const { client, pacer, signal } = run
  const ledger = await ledgerItems(run)
  const uids: string[] = []
  for await (const u of pagedList(pacer, (page, perPage) => client.listUsers({ page, perPage, withDeactivated: true }, signal), 1000, signal)) {
    uids.push(u.uid)
  }
  compareIds(run, ledger, 'users', uids)
  const guids: string[] = []
  for await (const g of pagedList(pacer, (page, perPage) => client.listGroups({ page, perPage }, signal), 1000, signal)) {
    guids.push(g.guid)
  }
  compareIds(run, ledger, 'groups', guids)
  const memberKeys: string[] = []
  for (const guid of new Set(guids)) {
    for await (const m of pagedList(pacer, (page, perPage) => client.listGroupMembers(guid, { page, perPage }, signal), 1000, signal)) {
      memberKeys.push(memberKey(guid, m.uid))
    }
    for await (const m of pagedList(pacer, (page, perPage) => client.listBannedUsers(guid, { page, perPage }, signal), 1000, signal)) {
      memberKeys.push(memberKey(guid, m.uid))
    }
  }
  compareIds(run, ledger, 'members', memberKeys)
}

/** The ledger's users, groups and members by target key; counts the done ones. */
async function ledgerItems(run: VerifyRun): Promise<LedgerItems> {
  const ledger: LedgerItems = { users: new Map(), groups: new Map(), members: new Map() }
  for (const r of await run.lookups.itemStates(run.jobId)) {
    ledger[r.entity].set(r.target_key, { legacyId: r.legacy_id, status: r.status, changed: r.changed })
    if (r.status === 'done') {
      run.entities[r.entity].ledgerDone++
    }
  }
  return ledger
}

/** The platform's keys of one entity against the ledger's: duplicates, unexpected, missing. */
function compareIds(run: VerifyRun, ledger: LedgerItems, entity: KeyedEntity, onPlatform: readonly string[]): void {
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
    if (item?.status === 'done') {
      continue
    }
    entities[entity].unexpected++
    if (item === undefined) {
      add({
        entity,
        kind: 'unexpected',
        targetKey: key,
        legacyId: null,
        field: null,
        expected: null,
        actual: key,
        explained: false,
        note: 'on the platform, unknown to the ledger',
      })
    } else {
      const explained = item.status === 'planned' || item.status === 'sent'
      add({
        entity,
        kind: 'unexpected',
        targetKey: key,
        legacyId: item.legacyId,
        field: null,
        expected: null,
        actual: key,
        explained,
        note: explained ? `the ledger has it ${item.status}: the load has not finished` : `on the platform, but ${item.status} in the ledger`,
      })
    }
  }
  for (const [key, item] of ledger[entity]) {
    if (item.status !== 'done' || seen.has(key)) {
      continue
    }
    entities[entity].missing++
    add({
      entity,
      kind: 'missing',
      targetKey: key,
      legacyId: item.legacyId,
      field: null,
      expected: key,
      actual: null,
      explained: false,
      note: 'done in the ledger, absent on the platform',
    })
  }
  entities[entity].platform = seen.size
}
