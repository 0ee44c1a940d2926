/**
 * A generic-sql job (Postgres source, the shared fixture) whose message 7 carries two files under a
 * local uploads directory — one there, one missing — re-hosted into a local store with one attempt
 * each: its files lane ends with one file copied (of {@link CHART_BYTES} bytes) and one failed.
 * For the tests that watch a load (metrics, dashboard) and need the files lane to move.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { parse, stringify } from 'yaml'

import { genericSourceConfig, openGenericWriter } from '../fixtures/generic-sql/fixture.ts'
import { pngBytes } from './file-server.ts'

export const CHART_BYTES = 2000

/** Puts the two files on message 7 of the Postgres source; returns the `source:` block that reads them. */
export async function sourceWithLocalFiles(sourceUrl: string): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(join(tmpdir(), 'cf-local-rehost-'))
  writeFileSync(join(dir, 'chart.png'), pngBytes(CHART_BYTES))
  const files = [
    { url: 'https://files.example.com/a/chart.png', mimeType: 'image/png', size: CHART_BYTES, path: 'chart.png' },
    { url: 'https://files.example.com/a/gone.bin', path: 'gone.bin' },
  ]
  const w = await openGenericWriter('postgres', sourceUrl)
  try {
    await w.exec(`UPDATE chat_lines SET files = '${JSON.stringify(files)}' WHERE lid = 7`)
  } finally {
    await w.close()
  }
  return { ...genericSourceConfig(sourceUrl), files: { kind: 'local', field: 'path', directory: dir } }
}

/** Adds `files: {mode: rehost}` into a local store (one attempt per file) to a job's configuration file. */
export function rehostIntoLocalStore(cfg: string): void {
  const yaml = parse(readFileSync(cfg, 'utf8')) as Record<string, unknown>
  const store = mkdtempSync(join(tmpdir(), 'cf-local-store-'))
  yaml.files = { mode: 'rehost', store: { kind: 'local', directory: store, publicBaseUrl: 'https://files.acme.example' }, attempts: 1 }
  writeFileSync(cfg, stringify(yaml))
}
