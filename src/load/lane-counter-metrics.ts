/**
 * The Prometheus counters of what a process's lanes did, defined once for both registries that
 * have them: a job's (metrics.ts: `run`, `load`, `worker`) and a fleet's (src/fleet/fleet-metrics.ts,
 * per tenant, labelled `job_id` and `tenant`). Each lane reports its cumulative counters about once
 * a second — the import loader's `onTick`, the files lane's, the update lane's — and a counter grows
 * by what a report adds to the last one with the same labels. A lane that starts again (a fleet
 * tenant's next loader, the next run of a job) counts from 0: a report of an import loader started
 * at another time, or one whose counts went down, is new in full.
 */
import type { Registry } from 'prom-client'

import type { FilesLaneCounters } from '../files/lane/files-lane.ts'
import type { LoaderCounters } from './loader-types.ts'
import { promClient } from './prom-client.ts'
import type { UpdateLaneCounters } from './update-lane-run.ts'

/** The labels of one lane's series beside the registry's own (a fleet's tenant; none for a job). */
export type LaneLabels = Readonly<Record<string, string>>

/** Where each lane of a process reports its counters (a job's registry, or a fleet's per tenant). */
export interface LaneCounterMetrics {
  /** The import loader's counters now (cumulative for that loader). */
  onTick(labels: LaneLabels, counters: LoaderCounters): void
  /** The files lane's counters now (cumulative for that lane). */
  onFilesTick(labels: LaneLabels, counters: FilesLaneCounters): void
  /** The update lane's counters now (cumulative for that lane). */
  onUpdatesTick(labels: LaneLabels, counters: UpdateLaneCounters): void
}

const LOADER_COUNTS = [
  'requests',
  'rateLimited',
  'pauses',
  'pausedMs',
  'itemsDone',
  'itemsRejected',
  'itemsRequeued',
  'itemsAgedOut',
  'batchesSettled',
  'batchesSplit',
  'batchesReleased',
  'readBacks',
  'chatRequests',
  'fenced',
  'ledgerErrors',
] as const satisfies readonly (keyof LoaderCounters)[]
// `inFlight` is no count: it goes down as files finish.
const FILES_COUNTS = ['copied', 'alreadyStored', 'bytes', 'retried', 'failed'] as const satisfies readonly (keyof FilesLaneCounters)[]
const UPDATE_COUNTS = [
  'requests',
  'rateLimited',
  'confirmed',
  'handedBack',
  'fenced',
  'ledgerErrors',
] as const satisfies readonly (keyof UpdateLaneCounters)[]

/**
 * What each report adds to the last one with the same labels: all of it after a restart (another
 * `startedAt`, or a count that went down).
 */
function growthOf<K extends string>(fields: readonly K[]) {
  const last = new Map<string, { startedAt: unknown; counts: Record<K, number> }>()
  return (labels: LaneLabels, counts: Readonly<Record<K, number>>, startedAt?: unknown): ((k: K) => number) => {
    const key = JSON.stringify(labels)
    let before = last.get(key)
    if (before !== undefined && (before.startedAt !== startedAt || fields.some((k) => counts[k] < before!.counts[k]))) {
      before = undefined
    }
    last.set(key, { startedAt, counts: Object.fromEntries(fields.map((k) => [k, counts[k]])) as Record<K, number> })
    return (k) => Math.max(0, counts[k] - (before?.counts[k] ?? 0))
  }
}

/** Registers the lanes' counters in `registry`, each with `labelNames` before its own labels. */
export function registerLaneCounters(registry: Registry, labelNames: readonly string[]): LaneCounterMetrics {
  const { Counter } = promClient()
  const counter = (name: string, help: string, own: string[] = []) =>
    new Counter({ name, help, labelNames: [...labelNames, ...own], registers: [registry] })
  const requests = counter('chatferry_loader_requests_total', 'Import requests this process sent')
  const rateLimited = counter('chatferry_loader_rate_limited_total', 'Import requests answered 429 (each pauses every process)')
  const pauses = counter('chatferry_loader_pauses_total', "Pauses of the app's import budget this process made after a 429 (every process waits)")
  const paused = counter('chatferry_loader_paused_seconds_total', 'Seconds of those pauses (the wait the 429 named, capped by load.maxRetryAfterMs)')
  const items = counter('chatferry_loader_items_total', 'Items this process settled, by outcome', ['outcome'])
  const batches = counter('chatferry_loader_batches_total', 'Batches this process settled, split or released', ['outcome'])
  const readBacks = counter('chatferry_loader_read_backs_total', 'Message batches read back after a bad-row 500')
  const chat = counter('chatferry_loader_chat_requests_total', 'Chat-interface requests of the read-backs')
  const fenced = counter('chatferry_loader_fenced_total', 'Batches this process lost to another worker (lease expired)')
  const ledgerErrors = counter(
    'chatferry_loader_ledger_errors_total',
    'Ledger operations of the loader that failed, by lane (import, update): settling a batch or an update (retried once its lease ends), ' +
      'each attempt of claiming, packing, a drained check or a dead-lease takeover (retried with backoff up to load.giveUpAfterMs when transient)',
    ['lane'],
  )
  const filesCopied = counter('chatferry_files_copied_total', 'Files this process copied into the store (alreadyStored: the store held them)', [
    'how',
  ])
  const filesBytes = counter('chatferry_files_copied_bytes_total', 'Bytes of the files this process copied')
  const filesFailed = counter(
    'chatferry_files_attempts_failed_total',
    'File copies that failed, by what follows (retried later, or failed for good)',
    ['then'],
  )
  const loaderGrowth = growthOf(LOADER_COUNTS)
  const filesGrowth = growthOf(FILES_COUNTS)
  const updateGrowth = growthOf(UPDATE_COUNTS)
  return {
    onTick(labels, c) {
      const d = loaderGrowth(labels, c, c.startedAt)
      requests.inc(labels, d('requests'))
      rateLimited.inc(labels, d('rateLimited'))
      pauses.inc(labels, d('pauses'))
      paused.inc(labels, d('pausedMs') / 1000)
      items.inc({ ...labels, outcome: 'done' }, d('itemsDone'))
      items.inc({ ...labels, outcome: 'rejected' }, d('itemsRejected'))
      items.inc({ ...labels, outcome: 'requeued' }, d('itemsRequeued'))
      items.inc({ ...labels, outcome: 'aged_out' }, d('itemsAgedOut'))
      batches.inc({ ...labels, outcome: 'settled' }, d('batchesSettled'))
      batches.inc({ ...labels, outcome: 'split' }, d('batchesSplit'))
      batches.inc({ ...labels, outcome: 'released' }, d('batchesReleased'))
      readBacks.inc(labels, d('readBacks'))
      chat.inc(labels, d('chatRequests'))
      fenced.inc(labels, d('fenced'))
      ledgerErrors.inc({ ...labels, lane: 'import' }, d('ledgerErrors'))
    },
    onFilesTick(labels, c) {
      const d = filesGrowth(labels, c)
      filesCopied.inc({ ...labels, how: 'uploaded' }, Math.max(0, d('copied') - d('alreadyStored')))
      filesCopied.inc({ ...labels, how: 'already_stored' }, d('alreadyStored'))
      filesBytes.inc(labels, d('bytes'))
      filesFailed.inc({ ...labels, then: 'retried' }, d('retried'))
      filesFailed.inc({ ...labels, then: 'failed' }, d('failed'))
    },
    onUpdatesTick(labels, c) {
      ledgerErrors.inc({ ...labels, lane: 'update' }, updateGrowth(labels, c)('ledgerErrors'))
    },
  }
}
