/**
 * The dry run's thread parents when its ledger is another process's: `plan` reading an embedded
 * store through the process that holds it (src/cli/ledger-read-socket.ts) cannot keep them in a
 * temporary table of the ledger (that would hold the holder's one connection for the whole dry
 * run). They go into a scratch SQLite file of this process instead (node:sqlite, built into the
 * Node versions chatferry runs on), in the temporary directory, removed when the session ends: the
 * same rows and the same first-row-wins rule as `chatferry_plan_parents`
 * (sql/insert-plan-parents.ts), with memory as flat as there. Not a ledger table: nothing here is
 * kept.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'

import type { PlanParentRow } from './sql/insert-plan-parents.ts'

/** The thread-parent half of a dry-run session, on a scratch file. */
export interface ScratchParents {
  /** Keeps a page's messages as thread parents; a legacy id already kept keeps its first row. */
  keepParents(rows: readonly PlanParentRow[]): Promise<void>
  /** The thread parents kept with these legacy ids. */
  parents(legacyIds: readonly string[]): Promise<PlanParentRow[]>
  /** Closes and removes the scratch file. */
  close(): void
}

/** SQLite's default limit of bound parameters per statement is 32766: look ids up in chunks. */
const CHUNK = 500

export function openScratchParents(): ScratchParents {
  const dir = mkdtempSync(join(tmpdir(), 'chatferry-plan-parents-'))
  const db = new DatabaseSync(join(dir, 'parents.db'))
  db.exec(`pragma journal_mode = off; pragma synchronous = off;
    create table parents (legacy_id text primary key, muid text, text text, sender_name text, skipped_policy text)`)
  const insert = db.prepare(
    'insert into parents (legacy_id, muid, text, sender_name, skipped_policy) values (?, ?, ?, ?, ?) on conflict (legacy_id) do nothing',
  )
  return {
    keepParents: async (rows) => {
      db.exec('begin')
      try {
        for (const r of rows) {
          insert.run(r.legacyId, r.muid, r.text, r.senderName, r.skippedPolicy)
        }
        db.exec('commit')
      } catch (err) {
        db.exec('rollback')
        throw err
      }
    },
    parents: async (legacyIds) => {
      const found: PlanParentRow[] = []
      for (let i = 0; i < legacyIds.length; i += CHUNK) {
        const ids = legacyIds.slice(i, i + CHUNK)
        const rows = db
          .prepare(`select legacy_id, muid, text, sender_name, skipped_policy from parents where legacy_id in (${ids.map(() => '?').join(', ')})`)
          .all(...ids) as { legacy_id: string; muid: string | null; text: string | null; sender_name: string | null; skipped_policy: string | null }[]
        for (const r of rows) {
          found.push({ legacyId: r.legacy_id, muid: r.muid, text: r.text, senderName: r.sender_name, skippedPolicy: r.skipped_policy })
        }
      }
      return found
    },
    close: () => {
      db.close()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
