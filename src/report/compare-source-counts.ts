/**
 * Verify, the source: each entity's row count in the legacy source (one snapshot) compared with
 * the legacy records the ledger accounts for; and, after a final delta, the rows changed since its
 * read began (the cutover): the legacy system written after the cutover is a mismatch.
 */
import { createConnector, type SourceConfig } from '../../connectors/index.ts'
import { LEGACY_ENTITIES, type LegacyEntity } from '../model/index.ts'
import type { VerifyRun } from './verify-run.ts'

/**
 * Counts the source's rows per entity against the ledger's records, and the rows changed since
 * `cutoverAt` (the last final delta's read start, epoch ms) when given; returns the source's snapshot time.
 */
export async function compareSourceCounts(run: VerifyRun, source: SourceConfig, cutoverAt?: number): Promise<number> {
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
              : `the ledger has ${ledgerRecords - rowsInSource} ${e} the source no longer has (removed items are not counted): ` +
                `\`chatferry run --delta${e === 'messages' ? ' --detect-deletes' : ''}\` finds them and records their removal as changes.vanished says`,
        })
      }
    }
    if (cutoverAt !== undefined && session.countChangedSince) {
      for (const e of LEGACY_ENTITIES) {
        const changed = (await session.countChangedSince(e, cutoverAt)) ?? 0
        if (changed > 0) {
          add({
            entity: e,
            kind: 'source-count',
            targetKey: null,
            legacyId: null,
            field: 'changed after the cutover',
            expected: 0,
            actual: changed,
            explained: false,
            note:
              `${changed} ${e} changed in the source after the final delta's read began at ${new Date(cutoverAt).toISOString()} (the cutover): ` +
              'the legacy system is still written — freeze it and run `chatferry run --delta --final --quiet-period 5m` again',
          })
        }
      }
    }
    return session.snapshotAt
  } finally {
    await session.close()
  }
}
