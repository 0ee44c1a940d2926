/**
 * The dry run's vanished-item comparison reads the source's keys only when the ledger holds a loaded
 * item of the entity: on a first plan (nothing loaded) nothing can have vanished, and reading every
 * key of a large source a second time is what it would cost. Both ledgers.
 */
import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'

import { inspectLedger } from '../../../src/state/inspect-ledger.ts'
import type { LedgerStore } from '../../../src/state/store.ts'
import { useBothLedgers } from '../../helpers/both-ledgers.ts'
import { users } from '../../helpers/ledger-fixtures.ts'

const { stores } = useBothLedgers('cf_dry_vanished')

/** The source's keys, in pages, noting whether anything read them. */
function sourceKeys(pages: string[][]): { keys: AsyncIterable<readonly string[]>; read: () => boolean } {
  let read = false
  return {
    keys: {
      async *[Symbol.asyncIterator]() {
        read = true
        yield* pages
      },
    },
    read: () => read,
  }
}

describe.each(stores)('the dry run on $name', (entry) => {
  const store = () => entry.store as LedgerStore

  it("does not read the source's keys while nothing of the entity is loaded, and compares them once something is", async () => {
    const s = store()
    await s.ensureJob('dry-vanished', 'app')
    await s.planItems('dry-vanished', 'users', users(3))
    const compare = (pages: string[][]) => {
      const source = sourceKeys(pages)
      const found: string[] = []
      return s.dryRun
        .session((session) => session.vanished('dry-vanished', 'users', source.keys, (items) => found.push(...items.map((i) => i.legacyId))))
        .then((scan) => ({ scan, found, read: source.read() }))
    }
    // Planned, none loaded: the keys are not read; nothing vanished.
    const first = await compare([['0'], ['1']])
    expect(first).toEqual({ scan: { vanished: 0, loaded: 0, refused: false }, found: [], read: false })
    // u0 and u2 (legacy ids 0 and 2) loaded; the source holds 0 and 1: 2 is gone.
    await sql`update chatferry.items set status = 'done' where job_id = 'dry-vanished' and target_key in ('u0', 'u2')`.execute(inspectLedger(s))
    const second = await compare([['0'], ['1']])
    expect(second).toEqual({ scan: { vanished: 1, loaded: 2, refused: false }, found: ['2'], read: true })
  })
})
