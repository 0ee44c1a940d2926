/**
 * The production mapping (`mapRecord`) over a fixture's canonical records, in this process, with the
 * lookups planning gives it (users → groups → members → messages, messages oldest first, a rejected
 * group's dependents naming its reject). For tests of what the mapping itself carries (the field
 * fates of field-fates.ts); never an end-to-end expectation — those come from the independent
 * oracle of expected-items.ts, so a mapping bug cannot sit on both sides of a comparison.
 */
import {
  createMappingContext,
  mapRecord,
  type MapResult,
  MemoryIdRegistry,
  type PlannedGroup,
  type PlannedMessage,
  type PlannedUser,
  type PoliciesInput,
  PoliciesSchema,
  type SkippedRef,
} from '../../mappings/index.ts'
import { LEGACY_ENTITIES, type LegacyEntity, legacyIdOf, type LegacyMessage, type LegacyRecordOf } from '../../src/model/index.ts'
import type { GroupImport, MessageImport, UserImport } from '../../src/target/schemas.ts'
import type { ExpectedRows } from '../fixtures/expected-row.ts'

export interface MappedRecords {
  /** Every record's mapping result: `entity legacyId` → result (items, outcomes…). */
  readonly results: Map<string, MapResult>
  /** Rejected rows and records: `entity legacyId`. */
  readonly rejects: Set<string>
}

/** Maps every record of `rows` once with `policies`, as planning would, at the clock `now`. */
export function mapInProcess(rows: ExpectedRows, policies: PoliciesInput, now: number): MappedRecords {
  const users = new Map<string, PlannedUser | SkippedRef>()
  const groups = new Map<string, PlannedGroup | SkippedRef>()
  const messages = new Map<string, PlannedMessage | SkippedRef>()
  const names = new Map<string, string>()
  const ctx = createMappingContext({ now, policies: PoliciesSchema.parse(policies), ids: new MemoryIdRegistry(), users, groups, messages })
  const results = new Map<string, MapResult>()
  const rejects = new Set<string>()
  const remember = (entity: LegacyEntity, record: LegacyRecordOf[LegacyEntity], result: MapResult) => {
    const legacyId = legacyIdOf(entity, record)
    const lookups = { users, groups, messages } as Record<LegacyEntity, Map<string, unknown> | undefined>
    if (result.kind !== 'items') {
      lookups[entity]?.set(legacyId, { skipped: true, policy: result.policy ?? 'dependencies' })
      return
    }
    for (const extra of result.extraItems) {
      names.set(extra.payload.uid, extra.payload.name)
    }
    const payload = result.items[0]?.payload
    if (entity === 'users' && payload) {
      const u = payload as UserImport
      const username = (record as LegacyRecordOf['users']).username
      users.set(legacyId, { uid: u.uid, name: u.name, ...(u.avatar ? { avatar: u.avatar } : {}), ...(username ? { username } : {}) })
      names.set(u.uid, u.name)
    } else if (entity === 'groups' && payload) {
      const g = payload as GroupImport
      groups.set(legacyId, {
        guid: g.guid,
        name: g.name,
        type: g.type,
        ...(g.createdAt !== undefined ? { createdAt: g.createdAt } : {}),
        ...(g.owner ? { owner: g.owner } : {}),
      })
    } else if (entity === 'messages' && payload) {
      const m = payload as MessageImport
      const senderName = names.get(m.sender)
      messages.set(legacyId, { muid: m.muid, ...(m.data?.text !== undefined ? { text: m.data.text } : {}), ...(senderName ? { senderName } : {}) })
    }
  }
  for (const entity of LEGACY_ENTITIES) {
    const list = [...rows[entity]]
    if (entity === 'messages') {
      list.sort((a, b) => (a.ok && b.ok ? oldestFirst(a.record as LegacyMessage, b.record as LegacyMessage) : 0))
    }
    for (const row of list) {
      if (!row.ok) {
        rejects.add(`${entity} ${row.legacyId}`)
        if (entity === 'groups' && !groups.has(row.legacyId)) {
          groups.set(row.legacyId, { skipped: true, policy: 'dependencies', rejected: row.field })
        }
        continue
      }
      const record = row.record as LegacyRecordOf[LegacyEntity]
      const key = `${entity} ${legacyIdOf(entity, record)}`
      const result = mapRecord(entity, record as never, ctx) as MapResult
      results.set(key, result)
      if (result.kind === 'rejected') {
        rejects.add(key)
      }
      remember(entity, record, result)
    }
  }
  return { results, rejects }
}

const oldestFirst = (x: LegacyMessage, y: LegacyMessage) => x.sentAt - y.sentAt || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0)
