/**
 * Verify, the source: each entity's row count in the legacy source (one snapshot) compared with
 * the legacy records the ledger accounts for.
 */
import { createConnector, type SourceConfig } from '../../connectors/index.ts'
import { LEGACY_ENTITIES, type LegacyEntity } from '../model/index.ts'
import type { VerifyRun } from './verify-run.ts'

/** Counts the source's rows per entity against the ledger's records; returns the source's snapshot time. */
export async function compareSourceCounts(run: VerifyRun, source: SourceConfig): Promise<number> {
  const { entities, add } = run
  const records = await run.lookups.legacyRecords(run.jobId)
  const byEntity = new Map(records.map((r) => [r.entity as LegacyEntity, r.n]))
  const session = await createConnector(source).open()
  try {
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
              ? `the source has ${rowsInSource - ledgerRecords} ${e} the ledger never planned (run \`${run.advice.reconcile}\`)`
              : `the ledger has ${ledgerRecords - rowsInSource} ${e} the source no longer has`,
        })
      }
    }
    return session.snapshotAt
  } finally {
    await session.close()
  }
}
