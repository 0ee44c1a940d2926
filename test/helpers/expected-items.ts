/**
 * The end-to-end oracle: what the platform should hold after a complete `chatferry run`, derived
 * from a fixture's expected canonical records (e.g. `expectedMattermost(seed)`) with the rules as
 * mappings/README.md and docs/configuration.md write them — independently of mappings/ (no
 * `mapRecord`, nothing copied from it), so a bug in the mapping shows as a difference on the
 * platform rather than on both sides. Records are walked as planning does: users → groups →
 * members → messages, messages oldest first (then by id), each record once; a row the connector
 * rejected stays rejected, and records naming a user or group whose row was rejected are rejected too.
 *
 * Stated exactly, per item (and compared by `compareWithExpected`): which keys exist (ids by the
 * README's id rule, hash and collision rule; placeholders; the system user; a split message's
 * parts, their numbers and, together, its text) and which records are rejected (with the field) or
 * skipped (with the policy); users' name, avatar, link, role, times, tags; groups'
 * name, type, password, icon, owner, createdAt when the record has one, tags; members' group,
 * user, scope, ban, joinedAt (clamped); messages' sender, receiver, category, type, sentAt, tags,
 * attachments (URL; name, extension, MIME type, size when the record gives them), custom data;
 * metadata's top-level keys and values (the record's own, `email`, `description`) and, under
 * `legacy`, the id, thread parent `{id, muid}`, `editedAt`, `deletedAt`, `archivedAt`, reactions.
 *
 * Stated partly or not at all, left to the mappings' unit tests (test/unit/mapping-*.test.ts):
 * - text a mention may be rewritten in (`mentions: rewrite`), and the quote's words
 *   (`threads.quoteParent`: only its `> <sender>: ` start and the reply's own text at the end);
 * - names over 100 characters cut inside non-ASCII text, derived attachment names and MIME types,
 *   the type of a text message whose attachments lack a MIME type;
 * - the rest of `legacy` (username, system kind…), metadata over 4 KB (`fieldLimits` may trim it);
 * - a group's derived createdAt (planning's hints; a test states it when it knows it), a user's
 *   createdAt the record lacks, a joinedAt the run's own clock decides.
 * Not modelled (the oracle throws rather than guess): policies other than those in
 * expected-policies.ts, data within a kilobyte of the 10 KB limit, a legacy user holding the system
 * user's uid. A user or group the mapping rejects is, for what refers to it, a rejected one.
 */
import type { PoliciesInput } from '../../mappings/index.ts'
import { LEGACY_ENTITIES, type LegacyEntity, type LegacyMessage, type LegacyRecordOf } from '../../src/model/index.ts'
import type { ExpectedRows } from '../fixtures/expected-row.ts'
import { expectGroup, expectMember, expectUser } from './expected-entities.ts'
import type { ExpectedItems } from './expected-facts.ts'
import { expectMessage } from './expected-messages.ts'
import { oraclePolicies } from './expected-policies.ts'
import type { World } from './expected-world.ts'

export interface ExpectedMigration {
  /** Every item the platform should hold, by key (uid, guid, `<guid>_member_<uid>`, muid), with its facts. */
  readonly items: ExpectedItems
  /** The legacy id each key comes from (`~placeholder:<uid>` style for extra items). */
  readonly legacyOfKey: Map<string, string>
  /** Rows that must be rejected: `entity legacyId` → the field at fault. */
  readonly rejects: Map<string, { entity: LegacyEntity; legacyId: string; field: string }>
  /** Records a policy skipped: `entity legacyId` → policy. */
  readonly skipped: Map<string, string>
}

/** Oldest first, then by id: the order planning meets thread parents before their replies. */
function byTime(rows: ExpectedRows['messages']): ExpectedRows['messages'] {
  return [...rows].sort((a, b) => {
    if (!a.ok || !b.ok) {
      return 0
    }
    const [x, y] = [a.record, b.record] as LegacyMessage[] as [LegacyMessage, LegacyMessage]
    return x.sentAt - y.sentAt || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0)
  })
}

/** What the platform should hold after a complete run over `rows` with `policies`, the run starting at `now` (epoch ms). */
export function expectMigration(rows: ExpectedRows, policies: PoliciesInput, now: number): ExpectedMigration {
  const w: World = {
    policies: oraclePolicies(policies),
    now,
    users: new Map(),
    groups: new Map(),
    messages: new Map(),
    usernames: new Set(),
    taken: { users: new Map(), groups: new Map() },
    items: { users: new Map(), groups: new Map(), members: new Map(), messages: new Map(), splits: new Map() },
    legacyOfKey: new Map(),
    rejects: new Map(),
    skipped: new Map(),
  }
  const map = {
    users: (r: LegacyRecordOf['users']) => expectUser(w, r),
    groups: (r: LegacyRecordOf['groups']) => expectGroup(w, r),
    members: (r: LegacyRecordOf['members']) => expectMember(w, r),
    messages: (r: LegacyRecordOf['messages']) => expectMessage(w, r),
  }
  for (const entity of LEGACY_ENTITIES) {
    const list = entity === 'messages' ? byTime(rows.messages) : rows[entity]
    const rejectedRows: { legacyId: string; field: string }[] = []
    for (const row of list) {
      if (row.ok) {
        ;(map[entity] as (r: unknown) => void)(row.record)
      } else {
        w.rejects.set(`${entity} ${row.legacyId}`, { entity, legacyId: row.legacyId, field: row.field })
        rejectedRows.push(row)
      }
    }
    // A user or group whose row was rejected (and has no valid twin): what refers to it is rejected too.
    const refs = entity === 'users' ? w.users : entity === 'groups' ? w.groups : undefined
    for (const r of rejectedRows) {
      if (refs !== undefined && !refs.has(r.legacyId)) {
        refs.set(r.legacyId, { rejected: r.field })
      }
    }
  }
  return { items: w.items, legacyOfKey: w.legacyOfKey, rejects: w.rejects, skipped: w.skipped }
}
