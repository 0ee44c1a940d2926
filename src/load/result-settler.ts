/**
 * Settling answered batches in groups: the batches whose answers arrive while a settle
 * transaction runs are settled together in the next one (each still fenced by its own token and
 * lease), so a busy process commits once per group instead of once per request. The SQL: src/state/sql/settle-batches.ts.
 */
import type { BatchSettlement } from '../state/batch-ledger.ts'
import type { ImportResult } from '../target/client.ts'
import type { Claim, LoaderRun } from './loader-types.ts'
import { settleItemResults, type SettlementTally } from './settle-item-results.ts'

interface PendingSettle {
  readonly c: Claim
  readonly result: ImportResult
  resolve(): void
  reject(err: unknown): void
}

/** The most batches settled in one transaction. */
const GROUP_MAX = 64

export class ResultSettler {
  private readonly buffer: PendingSettle[] = []
  private settling = false

  private readonly run: LoaderRun

  constructor(run: LoaderRun) {
    this.run = run
  }

  /** Settles the claim's items from the answer; resolves once its group is committed (or fenced out). */
  settle(c: Claim, result: ImportResult): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.buffer.push({ c, result, resolve, reject })
      if (!this.settling) {
        void this.flush()
      }
    })
  }

  private async flush(): Promise<void> {
    this.settling = true
    try {
      while (this.buffer.length > 0) {
        const group = this.buffer.splice(0, GROUP_MAX)
        try {
          await this.settleGroup(group)
          for (const p of group) {
            p.resolve()
          }
        } catch (err) {
          for (const p of group) {
            p.reject(err)
          }
        }
      }
    } finally {
      this.settling = false
    }
  }

  private async settleGroup(group: readonly PendingSettle[]): Promise<void> {
    const { run } = this
    const tallies = new Map<number, SettlementTally>()
    const settlements = group.map(({ c, result }): BatchSettlement => {
      const { items, tally } = settleItemResults(c.items, result.results)
      tallies.set(c.batchId, tally)
      return { report: c, items }
    })
    const settled = await run.store.batches.settle(run.jobId, settlements)
    for (const { c } of group) {
      const t = tallies.get(c.batchId)
      if (!settled.has(c.batchId) || t === undefined) {
        run.fencedOut(c.batchId)
        continue
      }
      run.counters.itemsDone += t.done
      run.counters.itemsRejected += t.rejected
      run.counters.itemsRequeued += t.requeued
      run.counters.batchesSettled++
    }
  }
}
