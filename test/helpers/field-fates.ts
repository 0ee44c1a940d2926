/**
 * The "no silent drop" contract: every field of a fixture's source rows that holds a value must
 * reach the platform payload of its record, or be counted (a policy outcome, or the record's
 * rejection or skip), or be documented in the connector's README as not carried. Each connector
 * declares a fate per table column (`FieldFates`); `fieldLosses` reads the fixture through the
 * connector, maps every record (the mappings, in process), walks the seed rows and lists every
 * field whose value went nowhere — including columns with no declared fate, so a new column in a
 * fixture cannot slip through.
 */
import { type PoliciesInput, toPlatformId } from '../../mappings/index.ts'
import type { SourceSession } from '../../src/model/connector.ts'
import { LEGACY_ENTITIES, type LegacyEntity, legacyIdOf } from '../../src/model/records.ts'
import type { ExpectedRows } from '../fixtures/expected-row.ts'
import { mapInProcess } from './map-in-process.ts'

type Row = Record<string, string | number | boolean | null>

/** What becomes of a column's value. */
export type Fate =
  /** Its words (or, for JSON, its leaves' words) appear in the record's payloads. */
  | 'text'
  /** As Unix seconds (from epoch ms or a SQL datetime) in the record's payloads. */
  | 'time'
  /** As given, or as the platform id the id rule makes of it, in the record's payloads. */
  | 'id'
  /** Counted: the record's mapping reports an outcome of this policy. */
  | { readonly outcome: string }
  /** Not carried, and the README says so: `mention` must appear in it. */
  | { readonly documented: string }
  /** Carried in a shape only a predicate can see. */
  | { readonly check: (value: unknown, payload: string, row: Row) => boolean; readonly what: string }

export interface TableFates {
  /** The records a row feeds (`entity`, legacy id); none: the row must be `skipRow`. */
  readonly records: (row: Row) => readonly (readonly [LegacyEntity, string])[]
  /** A row not carried on purpose, with the README wording that says so; undefined: carried. */
  readonly skipRow?: (row: Row) => string | undefined
  readonly fields: Readonly<Record<string, Fate>>
}

export type FieldFates = Readonly<Record<string, TableFates>>

const EMPTY = new Set(['', '{}', '[]', '0'])
const hasValue = (v: unknown) => v !== null && v !== undefined && v !== false && v !== 0 && !(typeof v === 'string' && EMPTY.has(v.trim()))

/**
 * The words of a value: JSON is walked to its string and number leaves. `@handle` mentions are left
 * out: a resolved one is carried as the platform's mention of the user (`<@uid:…>`), an unresolved
 * one stays as written, and its words are then checked like any other.
 */
export function words(v: unknown): string[] {
  if (typeof v === 'string') {
    const t = v.trim()
    if ((t.startsWith('{') || t.startsWith('[')) && t.length > 1) {
      try {
        return words(JSON.parse(t))
      } catch {
        // Not JSON: plain text.
      }
    }
    return t
      .replace(/(^|\s)@[\p{L}\p{N}._:~-]+/gu, '$1')
      .toLowerCase()
      .split(/[\s"'`@(),:;!?<>[\]{}\\/#*|=&]+/)
      .map((w) => w.replace(/^[.\-_]+|[.\-_]+$/g, ''))
      .filter((w) => w.length >= 2)
  }
  if (typeof v === 'number') {
    return [String(v)]
  }
  if (Array.isArray(v)) {
    return v.flatMap(words)
  }
  if (v !== null && typeof v === 'object') {
    return Object.values(v).flatMap(words)
  }
  return []
}

function seconds(v: unknown): string | undefined {
  if (typeof v === 'number') {
    return String(Math.floor(v / 1000))
  }
  if (typeof v === 'string') {
    const ms = Date.parse(/Z|[+-]\d\d:?\d\d$/.test(v) ? v : `${v.replace(' ', 'T')}Z`)
    return Number.isNaN(ms) ? undefined : String(Math.floor(ms / 1000))
  }
  return undefined
}

/**
 * Reads every entity through `session`, maps the records with `policies`, and returns one line per
 * lost field: `table row#n column=value: why`. Empty when nothing was dropped silently.
 */
export async function fieldLosses(
  session: SourceSession,
  seed: Readonly<Record<string, readonly Row[]>>,
  fates: FieldFates,
  readme: string,
  policies: PoliciesInput,
): Promise<string[]> {
  const rows = { users: [], groups: [], members: [], messages: [] } as unknown as ExpectedRows
  for (const entity of LEGACY_ENTITIES) {
    for await (const page of session.read(entity, { pageSize: 50 })) {
      for (const r of page.rows) {
        ;(rows[entity] as unknown[]).push(r.ok ? { ok: true, record: r.record } : { ok: false, legacyId: r.legacyId, field: r.field })
      }
    }
  }
  const read = new Set(LEGACY_ENTITIES.flatMap((e) => rows[e].map((r) => `${e} ${r.ok ? legacyIdOf(e, r.record as never) : r.legacyId}`)))
  const { results, rejects } = mapInProcess(rows, policies, Date.now())
  const losses: string[] = []
  for (const [table, tableRows] of Object.entries(seed)) {
    const tf = fates[table]
    tableRows.forEach((row, n) => {
      const where = `${table} row#${n}`
      if (tf === undefined) {
        losses.push(`${where}: table has no declared fates`)
        return
      }
      const skip = tf.skipRow?.(row)
      if (skip !== undefined) {
        if (!readme.includes(skip)) {
          losses.push(`${where}: skipped as "${skip}", which the README does not say`)
        }
        return
      }
      const targets = tf.records(row)
      if (targets.length === 0) {
        losses.push(`${where}: feeds no record`)
        return
      }
      const outcomes = new Set<string>()
      const payloads: unknown[] = []
      for (const [entity, id] of targets) {
        const key = `${entity} ${id}`
        const result = results.get(key)
        if (rejects.has(key) || result?.kind === 'rejected' || result?.kind === 'skipped') {
          return // Counted as a whole: the record's rejection or skip names its reason.
        }
        if (result === undefined) {
          losses.push(`${where}: its record ${key} was ${read.has(key) ? 'not mapped' : 'not read'}`)
          return
        }
        result.outcomes.forEach((o) => outcomes.add(o.policy))
        payloads.push(...result.items.map((i) => i.payload), ...result.extraItems.map((i) => i.payload))
      }
      const payload = JSON.stringify(payloads).toLowerCase()
      for (const [column, value] of Object.entries(row)) {
        if (!hasValue(value)) {
          continue
        }
        const fate = tf.fields[column]
        const lost = (why: string) => losses.push(`${where} ${column}=${JSON.stringify(value).slice(0, 60)}: ${why}`)
        if (fate === undefined) {
          lost('no fate declared for this column')
        } else if (fate === 'text') {
          const missing = words(value).filter((w) => !payload.includes(w))
          if (missing.length > 0) {
            lost(`words not in the payload: ${missing.slice(0, 5).join(', ')}`)
          }
        } else if (fate === 'time') {
          const s = seconds(value)
          if (s === undefined || !payload.includes(s)) {
            lost(`time ${s} not in the payload`)
          }
        } else if (fate === 'id') {
          const id = String(value)
          if (!payload.includes(id.toLowerCase()) && !payload.includes(toPlatformId(id))) {
            lost('id not in the payload')
          }
        } else if ('outcome' in fate) {
          if (!outcomes.has(fate.outcome)) {
            lost(`no ${fate.outcome} outcome counted`)
          }
        } else if ('documented' in fate) {
          if (!readme.includes(fate.documented)) {
            lost(`declared not carried, but the README does not say "${fate.documented}"`)
          }
        } else if (!fate.check(value, payload, row)) {
          lost(`not carried as ${fate.what}`)
        }
      }
    })
  }
  return losses
}
