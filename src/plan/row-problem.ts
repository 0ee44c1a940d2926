/** How a source row that could not become a record is counted and keyed in the ledger. */
import type { RowProblem } from '../model/connector.ts'

/** The reject reason a row problem is counted under: NULL and duplicate keys by name, the rest as unreadable. */
export function problemReason(row: RowProblem): string {
  if (row.reason.startsWith('duplicate key (')) {
    return `duplicate key (${row.field})`
  }
  if (row.reason.startsWith('duplicate id ')) {
    return `duplicate id (${row.field})`
  }
  if (row.reason.startsWith('key column ')) {
    return `NULL key ${row.field}`
  }
  return `unreadable ${row.field}`
}

/** The ledger key of a row problem: one per problem, even when rows share a legacy id. */
export function problemKey(row: RowProblem): string {
  return row.instance === undefined ? `~legacy:${row.legacyId}` : `~legacy:${row.legacyId}#${row.instance}`
}
