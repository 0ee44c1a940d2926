/**
 * `chatferry verify`: reconciles the platform's contents with the ledger and the source, through
 * the chat interface's list endpoints only (paced below the chat rate limit):
 *
 * - users, groups and members per group (banned ones included) are listed in full and compared id
 *   by id with the items the ledger marks done;
 * - messages are counted per conversation in one pass over the message list; a deterministic
 *   sample of the ledger's done messages is compared field by field (sender, receiver, sentAt,
 *   text); conversations whose counts differ are listed again to name each missing or unexpected
 *   message;
 * - the source's row count per entity is compared with the records the ledger accounts for.
 *
 * Every mismatch names its target key and legacy id. A mismatch the ledger explains (an item not
 * loaded yet, a source change after loading) is listed as explained; any other fails the run.
 */
import { sql } from 'kysely'
import { createConnector, type SourceConfig } from '../../connectors/index.ts'
import { LEGACY_ENTITIES, type LegacyEntity } from '../model/index.ts'
import { payloadJsonb, storableText } from '../state/index.ts'
import { createPlatformClient, type PlatformClient } from '../target/client.ts'
import { memberKey, type ChatMessage } from '../target/schemas.ts'
import { createChatPacer, pagedList, type ChatPacer } from './chat-pacer.ts'
import { renderVerifyHtml } from './html.ts'
import { newRunId, reportHeader, saveReport, writeReportFiles } from './meta.ts'
import type { ReportContext as LedgerContext } from './report-context.ts'
import { VerifyReport, type Mismatch } from './schema.ts'
import { formatVerifyReport } from './terminal.ts'

/** Messages compared field by field unless `--sample` says otherwise. */
export const DEFAULT_SAMPLE = 1000
/** Mismatches listed in a report; the rest are counted. */
export const MAX_LISTED_MISMATCHES = 2000
/** Conversations with a different count that are listed again to name their messages. */
export const MAX_DRILLED_CONVERSATIONS = 200
export const COMPARED_FIELDS = ['sender', 'receiver', 'sentAt', 'text'] as const

export interface VerifyOptions {
  /** Messages compared field by field. @default 1000 */
  readonly sample?: number
  /** Chat reads per minute. @default 1000 */
  readonly chatRequestsPerMinute?: number
  /** Compare with the source's row counts (needs `source` in the config). @default true when configured */
  readonly source?: boolean
  readonly outDir?: string
  readonly client?: PlatformClient
  readonly signal?: AbortSignal
}

export interface VerifyResult {
  readonly report: VerifyReport
  readonly text: string
  readonly files: { json: string; html: string } | undefined
  readonly passed: boolean
}

interface LedgerItem {
  legacyId: string
  status: string
  changed: boolean
}

/** `group_<guid>`, or the two uids joined by `_user_`, sorted (as the platform names conversations). */
export function conversationOf(sender: string, receiverType: string, receiver: string): string {
  if (receiverType === 'group') return `group_${receiver}`
  const [a, b] = [sender, receiver].sort()
  return `${a}_user_${b}`
}

export async function runVerify(ctx: LedgerContext, options: VerifyOptions = {}): Promise<VerifyResult> {
  const { config, store, jobId } = ctx
  const startedAt = Date.now()
  const runId = newRunId('verify')
  const signal = options.signal
  const t = config.target
  const client = options.client ?? createPlatformClient({ baseUrl: t.baseUrl, apiKey: t.apiKey, timeoutMs: t.timeoutMs })
  const pacer: ChatPacer = createChatPacer(options.chatRequestsPerMinute)
  const sampleSize = options.sample ?? DEFAULT_SAMPLE
  const mismatches: Mismatch[] = []
  let notListed = 0
  let unexplained = 0
  let total = 0
  const add = (m: Mismatch) => {
    total++
    if (!m.explained) unexplained++
    if (mismatches.length < MAX_LISTED_MISMATCHES) mismatches.push(m)
    else notListed++
  }

  const entities = Object.fromEntries(
    LEGACY_ENTITIES.map((e) => [e, { ledgerDone: 0, ledgerOpen: 0, platform: 0, missing: 0, unexpected: 0, duplicates: 0, source: null }]),
  ) as VerifyReport['entities']

  // ── the ledger ──
  const open = await sql<{ entity: LegacyEntity; n: number }>`
    select entity, count(*)::int as n from chatferry.items
    where job_id = ${jobId} and status in ('planned', 'sent', 'rejected') group by 1`.execute(store.db)
  for (const r of open.rows) entities[r.entity].ledgerOpen = r.n
  const ledger = { users: new Map<string, LedgerItem>(), groups: new Map<string, LedgerItem>(), members: new Map<string, LedgerItem>() }
  const rows = await sql<{ entity: 'users' | 'groups' | 'members'; target_key: string; legacy_id: string; status: string; changed: boolean }>`
    select entity, target_key, legacy_id, status, (loaded_hash is distinct from payload_hash) as changed
    from chatferry.items where job_id = ${jobId} and entity in ('users', 'groups', 'members')`.execute(store.db)
  for (const r of rows.rows) {
    ledger[r.entity].set(r.target_key, { legacyId: r.legacy_id, status: r.status, changed: r.changed })
    if (r.status === 'done') entities[r.entity].ledgerDone++
  }

  // ── users, groups, members: id by id ──
  function compareSet(entity: 'users' | 'groups' | 'members', onPlatform: readonly string[], scope?: (key: string) => boolean): void {
    const seen = new Set<string>()
    for (const key of onPlatform) {
      if (seen.has(key)) {
        entities[entity].duplicates++
        add({ entity, kind: 'duplicate', targetKey: key, legacyId: ledger[entity].get(key)?.legacyId ?? null, field: null, expected: 1, actual: 2, explained: false, note: 'listed twice by the platform' })
        continue
      }
      seen.add(key)
      const item = ledger[entity].get(key)
      if (item?.status === 'done') continue
      entities[entity].unexpected++
      if (item === undefined) {
        add({ entity, kind: 'unexpected', targetKey: key, legacyId: null, field: null, expected: null, actual: key, explained: false, note: 'on the platform, unknown to the ledger' })
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
      if (item.status !== 'done' || seen.has(key) || (scope && !scope(key))) continue
      entities[entity].missing++
      add({ entity, kind: 'missing', targetKey: key, legacyId: item.legacyId, field: null, expected: key, actual: null, explained: false, note: 'done in the ledger, absent on the platform' })
    }
    entities[entity].platform = seen.size
  }

  const uids: string[] = []
  for await (const u of pagedList(pacer, (page, perPage) => client.listUsers({ page, perPage, withDeactivated: true }, signal), 1000, signal)) uids.push(u.uid)
  compareSet('users', uids)
  const guids: string[] = []
  for await (const g of pagedList(pacer, (page, perPage) => client.listGroups({ page, perPage }, signal), 1000, signal)) guids.push(g.guid)
  compareSet('groups', guids)
  const memberKeys: string[] = []
  for (const guid of new Set(guids)) {
    for await (const m of pagedList(pacer, (page, perPage) => client.listGroupMembers(guid, { page, perPage }, signal), 1000, signal)) memberKeys.push(memberKey(guid, m.uid))
    for await (const m of pagedList(pacer, (page, perPage) => client.listBannedUsers(guid, { page, perPage }, signal), 1000, signal)) memberKeys.push(memberKey(guid, m.uid))
  }
  compareSet('members', memberKeys)

  // ── messages: per conversation, and a sample field by field ──
  const expectedByConversation = new Map<string, number>()
  const conv = await sql<{ conversation: string; n: number }>`
    select case when p->>'receiverType' = 'group' then 'group_' || (p->>'receiver')
      else least(p->>'sender' collate "C", p->>'receiver' collate "C") || '_user_' || greatest(p->>'sender' collate "C", p->>'receiver' collate "C") end as conversation,
      count(*)::int as n
    from (select ${payloadJsonb()} as p from chatferry.items where job_id = ${jobId} and entity = 'messages' and status = 'done') d
    group by 1`.execute(store.db)
  for (const r of conv.rows) {
    expectedByConversation.set(r.conversation, r.n)
    entities.messages.ledgerDone += r.n
  }
  const sample = new Map<string, { legacyId: string; changed: boolean; expected: Record<(typeof COMPARED_FIELDS)[number], unknown>; seen: boolean }>()
  if (sampleSize > 0) {
    const picked = await sql<{ target_key: string; legacy_id: string; payload: string; changed: boolean }>`
      select target_key, legacy_id, payload, (loaded_hash is distinct from payload_hash) as changed from chatferry.items
      where job_id = ${jobId} and entity = 'messages' and status = 'done' order by md5(target_key) limit ${sampleSize}`.execute(store.db)
    for (const r of picked.rows) {
      const p = JSON.parse(r.payload) as { sender: string; receiver: string; sentAt: number; data?: { text?: string } }
      sample.set(r.target_key, { legacyId: r.legacy_id, changed: r.changed, expected: { sender: p.sender, receiver: p.receiver, sentAt: p.sentAt, text: p.data?.text ?? null }, seen: false })
    }
  }
  const onPlatform = new Map<string, number>()
  let idsComparable = true
  let listed = 0
  let compared = 0
  for await (const m of messageList(pacer, client, {}, signal)) {
    listed++
    const c = m.conversationId ?? conversationOf(m.sender, m.receiverType, m.receiver)
    onPlatform.set(c, (onPlatform.get(c) ?? 0) + 1)
    if (m.muid === undefined) {
      idsComparable = false
      continue
    }
    const s = sample.get(m.muid)
    if (s === undefined || s.seen) continue
    s.seen = true
    compared++
    const actual: Record<string, unknown> = { sender: m.sender, receiver: m.receiver, sentAt: m.sentAt, text: (m.data as { text?: unknown } | undefined)?.text ?? null }
    for (const field of COMPARED_FIELDS) {
      if (JSON.stringify(actual[field]) === JSON.stringify(s.expected[field])) continue
      add({
        entity: 'messages',
        kind: 'field',
        targetKey: m.muid,
        legacyId: s.legacyId,
        field,
        // The report is stored as jsonb: a text the ledger or the platform holds with U+0000 is shown escaped.
        expected: storableValue(s.expected[field]),
        actual: storableValue(actual[field]),
        explained: s.changed,
        note: s.changed ? 'the source changed after loading (not resent): the platform has the older version' : 'differs from what the ledger sent',
      })
    }
  }
  entities.messages.platform = listed
  const mismatched: string[] = []
  for (const c of new Set([...expectedByConversation.keys(), ...onPlatform.keys()])) {
    const want = expectedByConversation.get(c) ?? 0
    const got = onPlatform.get(c) ?? 0
    if (want === got) continue
    mismatched.push(c)
    add({ entity: 'messages', kind: 'count', targetKey: c, legacyId: null, field: 'messages', expected: want, actual: got, explained: false, note: `conversation ${c}: ${want} done in the ledger, ${got} on the platform` })
  }
  // Name the messages of conversations whose counts differ.
  if (idsComparable) {
    for (const c of mismatched.slice(0, MAX_DRILLED_CONVERSATIONS)) {
      const ledgerRows = await sql<{ target_key: string; legacy_id: string; status: string }>`
        select target_key, legacy_id, status from (
          select target_key, legacy_id, status, ${payloadJsonb()} as p from chatferry.items
          where job_id = ${jobId} and entity = 'messages') d
        where (case when p->>'receiverType' = 'group' then 'group_' || (p->>'receiver')
          else least(p->>'sender' collate "C", p->>'receiver' collate "C") || '_user_' || greatest(p->>'sender' collate "C", p->>'receiver' collate "C") end) = ${c}`.execute(store.db)
      const inLedger = new Map(ledgerRows.rows.map((r) => [r.target_key, r]))
      const there = new Set<string>()
      for await (const m of messageList(pacer, client, { conversationId: c }, signal)) {
        if (m.muid === undefined) continue
        if (there.has(m.muid)) {
          entities.messages.duplicates++
          add({ entity: 'messages', kind: 'duplicate', targetKey: m.muid, legacyId: inLedger.get(m.muid)?.legacy_id ?? null, field: null, expected: 1, actual: 2, explained: false, note: 'listed twice by the platform' })
          continue
        }
        there.add(m.muid)
        const item = inLedger.get(m.muid)
        if (item?.status === 'done') continue
        entities.messages.unexpected++
        const explained = item?.status === 'planned' || item?.status === 'sent'
        add({
          entity: 'messages',
          kind: 'unexpected',
          targetKey: m.muid,
          legacyId: item?.legacy_id ?? null,
          field: null,
          expected: null,
          actual: m.muid,
          explained,
          note: item === undefined ? 'on the platform, unknown to the ledger' : explained ? `the ledger has it ${item.status}: the load has not finished` : `on the platform, but ${item.status} in the ledger`,
        })
      }
      for (const [key, item] of inLedger) {
        if (item.status !== 'done' || there.has(key)) continue
        entities.messages.missing++
        add({ entity: 'messages', kind: 'missing', targetKey: key, legacyId: item.legacy_id, field: null, expected: key, actual: null, explained: false, note: 'done in the ledger, absent on the platform' })
      }
    }
  }

  // ── the source ──
  let snapshotAt: number | undefined
  if (config.source !== undefined && options.source !== false) {
    const records = await sql<{ entity: LegacyEntity; n: number }>`
      select entity, count(distinct legacy_id)::int as n from chatferry.items
      where job_id = ${jobId} and legacy_id not like '~%' group by 1`.execute(store.db)
    const byEntity = new Map(records.rows.map((r) => [r.entity, r.n]))
    const session = await createConnector(config.source as SourceConfig).open()
    try {
      snapshotAt = session.snapshotAt
      for (const e of LEGACY_ENTITIES) {
        const rowsInSource = await session.count(e)
        const ledgerRecords = byEntity.get(e) ?? 0
        entities[e].source = { rows: rowsInSource, ledgerRecords }
        if (rowsInSource !== ledgerRecords) {
          add({
            entity: e,
            kind: 'source-count',
            targetKey: null,
            legacyId: null,
            field: 'rows',
            expected: rowsInSource,
            actual: ledgerRecords,
            explained: false,
            note:
              rowsInSource > ledgerRecords
                ? `the source has ${rowsInSource - ledgerRecords} ${e} the ledger never planned (run \`chatferry run --delta\`)`
                : `the ledger has ${ledgerRecords - rowsInSource} ${e} the source no longer has`,
          })
        }
      }
    } finally {
      await session.close()
    }
  }

  const report: VerifyReport = {
    ...reportHeader({ config, jobId, runId, snapshotAt, startedAt }),
    kind: 'verify',
    entities,
    messages: {
      conversations: new Set([...expectedByConversation.keys(), ...onPlatform.keys()]).size,
      conversationsMismatched: mismatched.length,
      sampleRequested: sampleSize,
      sampleCompared: compared,
      fields: [...COMPARED_FIELDS],
      idsComparable,
    },
    chat: { requests: pacer.requests, requestsPerMinute: pacer.requestsPerMinute, rateLimited: pacer.rateLimited },
    mismatches,
    mismatchesNotListed: notListed,
    totals: { mismatches: total, unexplained },
  }
  VerifyReport.parse(report)
  await saveReport(store, 'verify', report)
  const files = options.outDir ? writeReportFiles(options.outDir, 'verify', runId, report, renderVerifyHtml(report)) : undefined
  return { report, text: formatVerifyReport(report), files, passed: unexplained === 0 }
}

/** Every message matching `query`, oldest first, one paced request per page. */
async function* messageList(
  pacer: ChatPacer,
  client: PlatformClient,
  query: { conversationId?: string },
  signal?: AbortSignal,
): AsyncGenerator<ChatMessage> {
  let cursor: { id?: string; sentAt?: number } = {}
  for (;;) {
    const res = await pacer.run(() => client.listMessages({ ...query, limit: 1000, affix: 'append', ...cursor }, signal), signal)
    yield* res.data
    const next = res.meta.next
    if (res.data.length === 0 || next === undefined || (next.id === undefined && next.sentAt === undefined)) return
    if (next.id === cursor.id && next.sentAt === cursor.sentAt) throw new Error('the platform message list did not advance its cursor')
    cursor = { ...(next.id !== undefined ? { id: next.id } : {}), ...(next.sentAt !== undefined ? { sentAt: next.sentAt } : {}) }
  }
}

/** A compared value as a report can store it (strings escaped by {@link storableText}). */
function storableValue(v: unknown): unknown {
  return typeof v === 'string' ? storableText(v) : v
}
