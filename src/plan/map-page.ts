/**
 * One page of source rows, mapped: each row becomes items, an extra item or two, a skip or a
 * reject, and is counted in the entity's summary (problems, policy outcomes — the mappings' and
 * those the connector reports with the row —, referential problems, changes since the previous
 * plan, messages per month).
 */
import { type MappedItem, type MappingContext, mapRecord, type MapResult, type PolicyName } from '../../mappings/index.ts'
import type { RowProblem, SourceRow } from '../model/connector.ts'
import { type LegacyEntity, legacyIdOf, type LegacyMessage, type LegacyRecordOf } from '../model/index.ts'
import { ledgerSortKey, placeholderKey, type PlannedItem, type RejectedItem, type SkippedItem } from '../state/index.ts'
import type { MemberImport, MessageImport } from '../target/schemas.ts'
import { skipReason } from './lookups.ts'
import { MEMBER_LIMIT_CODE } from './member-limits.ts'
import { filesOfMessage, omitAttachments } from './message-files.ts'
import { type EntityPlanSummary, note, noteOne, noteReject } from './plan-summary.ts'
import type { PlanRun } from './plan-types.ts'
import { countOutcomes } from './policy-outcomes.ts'
import { referentialOf } from './referential-of.ts'
import { problemKey, problemReason } from './row-problem.ts'

/** What a page hands to the sink. */
export interface MappedPage {
  readonly items: PlannedItem[]
  /** Extra users (placeholders, the system user) not planned yet in this run. */
  readonly extras: PlannedItem[]
  readonly skips: SkippedItem[]
  readonly rejects: RejectedItem[]
}

/** The state of one page: where results go, and which target keys its rows took. */
interface PageState extends MappedPage {
  readonly run: PlanRun
  readonly entity: LegacyEntity
  readonly summary: EntityPlanSummary
  readonly ctx: MappingContext
  /** Target key → the legacy id that took it on this page. */
  readonly pageKeys: Map<string, string>
}

/** Maps the rows of a page (the thread parents of the page must be in `run.known` already). */
export function mapPage(
  run: PlanRun,
  entity: LegacyEntity,
  rows: readonly SourceRow<LegacyRecordOf[LegacyEntity]>[],
  summary: EntityPlanSummary,
): MappedPage {
  const { options } = run
  const ctx: MappingContext = {
    now: options.now,
    policies: options.policies,
    ids: run.ids,
    ...run.known.lookups(),
    groupCreation: run.groupCreation.hints,
    ...(options.adjust ? { adjust: options.adjust } : {}),
  }
  const page: PageState = { run, entity, summary, ctx, items: [], extras: [], skips: [], rejects: [], pageKeys: new Map() }
  for (const row of rows) {
    if (row.ok) {
      if (row.outcomes !== undefined) {
        countOutcomes(row.outcomes, legacyIdOf(entity, row.record), run.outcomes, summary.outcomes)
      }
      mapRow(page, row.record)
    } else {
      countOutcomes(row.outcomes, row.legacyId, run.outcomes, summary.outcomes)
      rejectProblem(page, row)
    }
  }
  return { items: page.items, extras: page.extras, skips: page.skips, rejects: page.rejects }
}

/**
 * A record the mapping rejected, for the records that refer to it: a user's messages and
 * memberships, a group's members and messages, are rejected naming this reject (as for a source
 * row the connector rejected), never skipped as if a policy had chosen to leave it out — a skip is
 * never sent again, a reject is listed, fixed and retried. A rejected message is remembered as
 * skipped for its replies (their thread policy decides).
 */
function rememberRejected(
  run: PlanRun,
  entity: LegacyEntity,
  record: LegacyRecordOf[LegacyEntity],
  legacyId: string,
  reason: string,
  policy?: PolicyName,
): void {
  if (entity === 'users') {
    run.known.rememberRejectedUser(legacyId, reason)
  } else if (entity === 'groups') {
    run.known.rememberRejectedGroup(legacyId, reason)
  } else {
    run.known.remember(entity, record, undefined, { skipped: true, policy: policy ?? 'dependencies' })
  }
}

/** A row that could not become a record: counted and rejected with its field and reason. */
function rejectProblem({ run, entity, summary, rejects }: PageState, row: RowProblem): void {
  summary.problems++
  if (entity === 'groups') {
    run.known.rememberRejectedGroup(row.legacyId, `${row.field}: ${row.reason}`)
  } else if (entity === 'users') {
    run.known.rememberRejectedUser(row.legacyId, `${row.field}: ${row.reason}`)
  }
  const targetKey = problemKey(row)
  noteReject(summary, problemReason(row), { legacyId: row.legacyId, targetKey, field: row.field, problem: row.reason })
  if (row.reason.startsWith('unknown ')) {
    note(summary.referential, `${entity === 'messages' ? 'message' : entity} with ${row.reason.replace(/ \S+$/, '')}`, row.legacyId)
  }
  rejects.push({ legacyId: row.legacyId, targetKey, code: 'SOURCE_ROW_INVALID', message: `${row.field}: ${row.reason}` })
}

function mapRow(page: PageState, record: LegacyRecordOf[LegacyEntity]): void {
  const { run, entity, summary } = page
  summary.records++
  const legacyId = legacyIdOf(entity, record)
  noteRecord(page, record, legacyId)
  const result = mapRecord(entity, record, page.ctx)
  const parentId = entity === 'messages' ? (record as LegacyMessage).threadParentId : undefined
  const parentSkipped = parentId !== undefined && parentId !== null && 'skipped' in (run.known.message(parentId) ?? {})
  for (const r of referentialOf(entity, result, parentSkipped)) {
    note(summary.referential, r, legacyId)
  }
  if (result.kind === 'rejected') {
    // Never mapped, so kept under the ledger's key for an item without one.
    const sample = { legacyId, targetKey: placeholderKey(legacyId), field: result.field, problem: result.reason }
    noteReject(summary, `${result.field}: ${result.policy ? `${result.policy} policy` : 'invalid'}`, sample)
    page.rejects.push({ legacyId, code: 'MAPPING_INVALID', message: `${result.field}: ${result.reason}` })
    rememberRejected(run, entity, record, legacyId, `${result.field}: ${result.reason}`, result.policy)
    return
  }
  countOutcomes(result.outcomes, legacyId, run.outcomes, summary.outcomes)
  if (result.kind === 'skipped') {
    note(summary.skipped, `${result.policy}: ${result.reason}`, legacyId)
    page.skips.push({ legacyId, reason: skipReason(result.policy, result.reason) })
    run.known.remember(entity, record, undefined, { skipped: true, policy: result.policy })
    return
  }
  if (rejectTwin(page, result.items, legacyId) || rejectBeyondMemberLimit(page, result.items, legacyId)) {
    return
  }
  for (const item of result.items) {
    page.pageKeys.set(item.targetKey, legacyId)
    // Messages drain oldest first (the ledger's rule: their sentAt); its id breaks ties, which keeps split parts in order.
    page.items.push(
      withFiles(page, record, { legacyId, targetKey: item.targetKey, payload: item.payload, sortKey: ledgerSortKey(entity, item.payload, 0) }),
    )
  }
  summary.items += result.items.length
  for (const extra of result.extraItems) {
    const planned = run.extras.add(extra)
    if (planned) {
      page.extras.push(planned)
    }
  }
  run.known.remember(entity, record, result.items[0] as MappedItem | undefined, undefined)
}

/** A message item under `files.mode`: its files recorded (`rehost`) or its attachments left out (`omit`), counted. */
function withFiles({ run, entity, summary }: PageState, record: LegacyRecordOf[LegacyEntity], item: PlannedItem): PlannedItem {
  const mode = run.options.files?.mode ?? 'reference'
  if (entity !== 'messages') {
    return item
  }
  const message = record as LegacyMessage
  if (mode === 'reference') {
    for (const f of filesOfMessage(message, item.payload as MessageImport) ?? []) {
      run.files?.add(f)
    }
    return item
  }
  if (mode === 'omit') {
    const { payload, omitted } = omitAttachments(item.payload as MessageImport)
    if (omitted > 0) {
      note(summary.outcomes, 'files: omitted', item.legacyId)
    }
    return { ...item, payload }
  }
  const files = filesOfMessage(message, item.payload as MessageImport)
  for (const f of files ?? []) {
    run.files?.add(f)
  }
  return files === undefined ? item : { ...item, files }
}

/** Counts a record changed since the previous plan, and a message in its month. */
function noteRecord({ run, entity, summary }: PageState, record: LegacyRecordOf[LegacyEntity], legacyId: string): void {
  const { changedSince } = run.options
  if (changedSince !== undefined) {
    const at = changedAtOf(entity, record)
    if (at !== undefined && at >= changedSince) {
      noteOne(summary.changedSince, legacyId)
    }
  }
  if (entity === 'messages') {
    const sentAt = (record as LegacyMessage).sentAt
    if (typeof sentAt === 'number' && Number.isFinite(sentAt)) {
      const m = (run.months[monthOf(sentAt)] ??= { messages: 0, beyondRetention: 0 })
      m.messages++
      if (sentAt < run.retentionStart) {
        m.beyondRetention++
      }
    }
  }
}

/** Rejects a record when another legacy row of this page already maps to one of its target keys. */
function rejectTwin({ summary, rejects, pageKeys }: PageState, items: Extract<MapResult, { kind: 'items' }>['items'], legacyId: string): boolean {
  const twin = targetKeyTwin(items, legacyId, pageKeys)
  if (twin === undefined) {
    return false
  }
  const targetKey = `~legacy:${legacyId}#duplicate-of:${twin.legacyId}`
  const problem = `legacy rows ${twin.legacyId} and ${legacyId} both map to ${twin.targetKey}; the first (${twin.legacyId}) is kept`
  noteReject(summary, 'targetKey: duplicate target key', { legacyId, targetKey, field: 'targetKey', problem })
  rejects.push({ legacyId, targetKey, code: 'DUPLICATE_TARGET_KEY', message: `targetKey: ${problem}` })
  return true
}

/** Rejects a membership that would put its user in too many groups, or its group over its size. */
function rejectBeyondMemberLimit({ run, entity, summary, rejects }: PageState, items: readonly MappedItem[], legacyId: string): boolean {
  const item = items[0]
  if (entity !== 'members' || run.memberLimits === undefined || item === undefined) {
    return false
  }
  const { guid, uid } = item.payload as MemberImport
  const refused = run.memberLimits.admit(guid, uid, legacyId)
  if (refused === undefined) {
    return false
  }
  const limit = refused.field === 'guid' ? 'membersPerGroup' : 'groupsPerUser'
  const reason = `${refused.field}: over the platform's ${limit} limit (${run.memberLimits.limits[limit]})`
  noteReject(summary, reason, { legacyId, targetKey: item.targetKey, field: refused.field, problem: refused.reason })
  rejects.push({
    legacyId,
    targetKey: item.targetKey,
    code: MEMBER_LIMIT_CODE,
    message: `${refused.field}: ${refused.reason}`,
    payload: item.payload,
  })
  return true
}

/** An item of this page that another legacy row already maps to the same target key, if any. */
function targetKeyTwin(
  items: readonly MappedItem[],
  legacyId: string,
  pageKeys: ReadonlyMap<string, string>,
): { targetKey: string; legacyId: string } | undefined {
  for (const item of items) {
    const other = pageKeys.get(item.targetKey)
    if (other !== undefined && other !== legacyId) {
      return { targetKey: item.targetKey, legacyId: other }
    }
  }
  return undefined
}

function monthOf(ms: number): string {
  const d = new Date(ms)
  return `${d.getUTCFullYear()}-${String(d.getUTCMonth() + 1).padStart(2, '0')}`
}

/** The time a record last changed, for "changed since the previous plan". */
function changedAtOf(entity: LegacyEntity, record: LegacyRecordOf[LegacyEntity]): number | undefined {
  const r = record as { updatedAt?: number; sentAt?: number; createdAt?: number; joinedAt?: number }
  if (typeof r.updatedAt === 'number') {
    return r.updatedAt
  }
  if (entity === 'messages' && typeof r.sentAt === 'number') {
    return r.sentAt
  }
  if (entity === 'members' && typeof r.joinedAt === 'number') {
    return r.joinedAt
  }
  return typeof r.createdAt === 'number' ? r.createdAt : undefined
}
