/**
 * What every report names (version, config hash without secrets, run id), where reports are kept
 * in the ledger (through `store.reports`, `src/state/report-archive.ts`) and where they are written on disk.
 */
import { createHash, randomUUID } from 'node:crypto'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'

import { withoutSecrets } from '../logger.ts'
import type { LedgerStore } from '../state/index.ts'
import { VERSION } from '../version.ts'
import type { ReportConfig as ResolvedConfig } from './report-context.ts'
import { REPORT_SCHEMA_VERSION } from './schema.ts'

/** sha256 (hex) of the configuration without secrets and without the file's path: same settings, same hash. */
export function configHash(config: ResolvedConfig): string {
  const { file: _file, ...rest } = config
  return createHash('sha256')
    .update(JSON.stringify(withoutSecrets(rest)))
    .digest('hex')
}

/** A new run id: `plan-20261121T162840Z-1a2b3c4d`. */
export function newRunId(kind: 'plan' | 'verify', now = new Date()): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z')
  return `${kind}-${stamp}-${randomUUID().slice(0, 8)}`
}

export interface HeaderInput {
  readonly config: ResolvedConfig
  readonly jobId: string
  readonly runId: string
  readonly snapshotAt: number | undefined
  readonly startedAt: number
}

export function reportHeader(h: HeaderInput) {
  return {
    schemaVersion: REPORT_SCHEMA_VERSION as typeof REPORT_SCHEMA_VERSION,
    runId: h.runId,
    jobId: h.jobId,
    appId: h.config.target.appId,
    region: h.config.target.region,
    chatferryVersion: VERSION,
    configHash: configHash(h.config),
    sourceSnapshotAt: h.snapshotAt !== undefined ? new Date(h.snapshotAt).toISOString() : null,
    generatedAt: new Date().toISOString(),
    durationMs: Math.round(Date.now() - h.startedAt),
  }
}

/** Keeps a report in the ledger (one row per run): {@link LedgerStore.reports}. */
export async function saveReport(
  store: Pick<LedgerStore, 'reports'>,
  kind: 'plan' | 'verify',
  report: { jobId: string; runId: string },
): Promise<void> {
  await store.reports.save(kind, report)
}

/** The latest report of a kind for a job, if any: {@link LedgerStore.reports}. */
export async function latestReport<T>(store: Pick<LedgerStore, 'reports'>, jobId: string, kind: 'plan' | 'verify'): Promise<T | undefined> {
  return store.reports.latest<T>(jobId, kind)
}

/** Writes `<dir>/<kind>-report.json` and `.html` (and a copy named by run id); returns the paths. */
export function writeReportFiles(dir: string, kind: 'plan' | 'verify', runId: string, json: unknown, html: string): { json: string; html: string } {
  const out = resolve(dir)
  mkdirSync(out, { recursive: true })
  const jsonText = `${JSON.stringify(json, null, 2)}\n`
  const paths = { json: join(out, `${kind}-report.json`), html: join(out, `${kind}-report.html`) }
  writeFileSync(paths.json, jsonText)
  writeFileSync(paths.html, html)
  writeFileSync(join(out, `${runId}.json`), jsonText)
  return paths
}
