/**
 * One run = one row, with one writer (issue 25): outside src/state, which holds the SQL, only
 * `src/job/run-row.ts` calls the store's run-row writes (`startRun`, `heartbeatRun`, `finishRun`,
 * `markRunDied`); every run reaches them through `src/job/job-run.ts`, which creates the row once
 * and hands it down. A second writer — a loader, a command, a fleet writing a row of its own, or
 * looking for "its" row again to end it — fails here, named with its file and line.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'

import { expect, it } from 'vitest'

const ROOT = resolve(import.meta.dirname, '../../..')
const OWNER = 'src/job/run-row.ts'
const WRITE = /\.\s*(startRun|heartbeatRun|finishRun|markRunDied)\s*\(/

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`
    if (entry.isDirectory()) {
      return sourceFiles(path)
    }
    return /\.(c|m)?ts$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : []
  })
}

/** `file:line` of every run-row write outside src/state and the owner. */
function writers(files: readonly { path: string; text: string }[]): string[] {
  return files
    .filter((f) => !f.path.startsWith('src/state/') && f.path !== OWNER)
    .flatMap((f) => f.text.split('\n').flatMap((line, i) => (WRITE.test(line) ? [`${f.path}:${i + 1}`] : [])))
}

it('run rows have one writer: src/job/run-row.ts', () => {
  const files = ['src', 'connectors', 'mappings'].flatMap(sourceFiles).map((path) => ({ path, text: readFileSync(join(ROOT, path), 'utf8') }))
  expect(writers(files)).toEqual([])
  expect(files.some((f) => f.path === OWNER && WRITE.test(f.text))).toBe(true)
  // The check finds a second writer where there is one.
  expect(writers([{ path: 'src/load/loader-run.ts', text: 'x\n    this.runId = await this.store.startRun(this.jobId, mode)' }])).toEqual([
    'src/load/loader-run.ts:2',
  ])
})
