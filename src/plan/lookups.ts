/**
 * What mappings look up while a job is planned (users, groups, thread parents), rebuilt from the
 * ledger when a run resumes, so a resumed plan maps exactly like an uninterrupted one.
 */
import type { IdKind, IdMapEntry, PlannedGroup, PlannedMessage, PlannedUser, PolicyName, SkippedRef } from '../../mappings/index.ts'
import type { IdMapRow, LedgerStore, LookupItemRow } from '../state/index.ts'
import type { GroupImport, MessageImport, UserImport } from '../target/schemas.ts'

/** Skip reasons are stored as `policy:<name>: <reason>`; the name is what dependents report. */
export function skipReason(policy: string, reason: string): string {
  return `policy:${policy}: ${reason}`
}

export function policyOfSkipReason(reason: string | null): PolicyName {
  const m = /^policy:([^:]+):/.exec(reason ?? '')
  return (m?.[1] ?? 'dependencies') as PolicyName
}

function skipped(reason: string | null): SkippedRef {
  return { skipped: true, policy: policyOfSkipReason(reason) }
}

/** The ledger's id map rows as the id registry replays them, in decision order. */
export function idMapEntries(rows: readonly IdMapRow[]): IdMapEntry[] {
  return rows.map((r) => ({ kind: r.kind as IdKind, legacyId: r.legacyId, platformId: r.platformId }))
}

/** The ledger's id map of a job, in decision order. */
export async function loadIdMap(store: LedgerStore, jobId: string): Promise<IdMapEntry[]> {
  return idMapEntries(await store.planLookups.idMap(jobId))
}

export async function loadUsers(store: LedgerStore, jobId: string, metadataKey: string): Promise<Map<string, PlannedUser | SkippedRef>> {
  const users = new Map<string, PlannedUser | SkippedRef>()
  // The first item of a legacy id wins (extra items such as placeholders have their own legacy ids).
  for (const row of await store.planLookups.items(jobId, 'users')) {
    if (users.has(row.legacy_id)) {
      continue
    }
    if (row.status === 'skipped' || row.payload === null) {
      users.set(row.legacy_id, skipped(row.last_error_message))
      continue
    }
    const u = JSON.parse(row.payload) as UserImport
    const username = (u.metadata?.[metadataKey] as { username?: unknown } | undefined)?.username
    users.set(row.legacy_id, {
      uid: u.uid,
      name: u.name,
      ...(u.avatar !== undefined ? { avatar: u.avatar } : {}),
      ...(typeof username === 'string' ? { username } : {}),
    })
  }
  // Users whose source row or mapping was rejected: their messages and memberships name that reject.
  for (const row of await store.planLookups.rejectedRows(jobId, 'users')) {
    if (!users.has(row.legacyId)) {
      users.set(row.legacyId, { skipped: true, policy: 'dependencies', rejected: row.message })
    }
  }
  return users
}

export async function loadGroups(store: LedgerStore, jobId: string): Promise<Map<string, PlannedGroup | SkippedRef>> {
  const groups = groupsOf(await store.planLookups.items(jobId, 'groups'))
  // Groups whose source row or mapping was rejected: their members and messages name that reject.
  for (const row of await store.planLookups.rejectedRows(jobId, 'groups')) {
    if (!groups.has(row.legacyId)) {
      groups.set(row.legacyId, { skipped: true, policy: 'dependencies', rejected: row.message })
    }
  }
  return groups
}

/** The ledger's group rows as lookups: the first item of a legacy id wins. */
export function groupsOf(rows: readonly LookupItemRow[]): Map<string, PlannedGroup | SkippedRef> {
  const groups = new Map<string, PlannedGroup | SkippedRef>()
  for (const row of rows) {
    if (groups.has(row.legacy_id)) {
      continue
    }
    if (row.status === 'skipped' || row.payload === null) {
      groups.set(row.legacy_id, skipped(row.last_error_message))
      continue
    }
    groups.set(row.legacy_id, plannedGroup(JSON.parse(row.payload) as GroupImport))
  }
  return groups
}

export function plannedGroup(g: GroupImport): PlannedGroup {
  return {
    guid: g.guid,
    name: g.name,
    type: g.type,
    ...(g.createdAt !== undefined ? { createdAt: g.createdAt } : {}),
    ...(g.owner !== undefined ? { owner: g.owner } : {}),
  }
}

/** Thread parents of one page, looked up in the ledger with one query. */
export async function loadMessages(
  store: LedgerStore,
  jobId: string,
  legacyIds: readonly string[],
  nameOfUid: (uid: string) => string | undefined,
): Promise<Map<string, PlannedMessage | SkippedRef>> {
  const found = new Map<string, PlannedMessage | SkippedRef>()
  if (legacyIds.length === 0) {
    return found
  }
  const rows = await store.planLookups.messages(jobId, legacyIds)
  for (const row of rows) {
    if (found.has(row.legacy_id)) {
      continue
    }
    found.set(row.legacy_id, plannedMessageOf(row, nameOfUid))
  }
  return found
}

function plannedMessageOf(row: LookupItemRow, nameOfUid: (uid: string) => string | undefined): PlannedMessage | SkippedRef {
  if (row.status === 'skipped' || row.payload === null) {
    return skipped(row.last_error_message)
  }
  const m = JSON.parse(row.payload) as MessageImport
  return plannedMessage(m, nameOfUid)
}

export function plannedMessage(m: MessageImport, nameOfUid: (uid: string) => string | undefined): PlannedMessage {
  const senderName = nameOfUid(m.sender)
  return {
    muid: m.muid,
    ...(m.data?.text !== undefined ? { text: m.data.text } : {}),
    ...(senderName !== undefined ? { senderName } : {}),
  }
}
