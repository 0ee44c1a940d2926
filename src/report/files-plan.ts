/**
 * The plan report's files section (issue 27): the inventory of the job's files under its
 * `files.mode` — count and stated bytes by type, the largest, those over `files.maxBytes` — the
 * files lane's time estimate beside the import's, and, under `reference`, how many of a sample of
 * legacy URLs answered (they break when the legacy system is switched off), and under `rehost`
 * the files no reader of the job can read (its connector's file source set wrong).
 */
import { z } from 'zod'

import type { FilesConfig } from '../files/config.ts'
import type { FilesInventorySummary } from '../plan/files-inventory.ts'

/** Download speed assumed per host when `files.bandwidthBytesPerSecond` sets no cap (the estimate says so). */
export const ASSUMED_BYTES_PER_SECOND = 10 * 1024 * 1024

const Entry = z.object({ name: z.string(), url: z.string(), size: z.number().nullable(), type: z.string() })

export const FilesPlan = z.object({
  mode: z.enum(['rehost', 'reference', 'omit']),
  files: z.number().int(),
  bytes: z.number(),
  unknownSize: z.number().int(),
  byType: z.array(z.object({ type: z.string(), files: z.number().int(), bytes: z.number() })),
  largest: z.array(Entry),
  maxBytes: z.number(),
  overMaxBytes: z.object({ files: z.number().int(), samples: z.array(Entry) }),
  /** The files lane's time (rehost): the slowest host at its pacing, or the bytes at the bandwidth. */
  estimate: z.object({ seconds: z.number(), basis: z.string() }).nullable(),
  /** Reference: a sample of legacy URLs asked with HEAD. */
  reachability: z
    .object({ checked: z.number().int(), reachable: z.number().int(), failures: z.array(z.object({ url: z.string(), problem: z.string() })) })
    .nullable(),
  /**
   * Rehost: files whose locator names a reader the job cannot make (its connector's file source
   * set wrong, say a directory that does not exist): the run stops on it as a configuration error.
   */
  unreadable: z
    .object({ files: z.number().int(), readers: z.array(z.object({ reader: z.string(), files: z.number().int(), problem: z.string() })) })
    .optional(),
  warnings: z.array(z.string()),
})
export type FilesPlan = z.infer<typeof FilesPlan>

type Entry = z.infer<typeof Entry>
const entry = (e: { name: string; url: string; size: number | undefined; type: string }): Entry => ({ ...e, size: e.size ?? null })

/** The files lane's time: each host at its pacing (requests per second), and the bytes at the bandwidth cap (or the assumed speed). */
export function filesEstimate(inv: FilesInventorySummary, settings: FilesConfig): { seconds: number; basis: string } {
  let slowest = 0
  for (const [host, files] of Object.entries(inv.byHost)) {
    const pacing = settings.hosts[host] ?? settings.perHost
    slowest = Math.max(slowest, files / pacing.requestsPerSecond)
  }
  const rate = settings.bandwidthBytesPerSecond ?? ASSUMED_BYTES_PER_SECOND
  const bytesSeconds = inv.bytes / rate
  const basis =
    `the slowest host at its files.perHost/hosts pacing, or the stated bytes at ` +
    (settings.bandwidthBytesPerSecond !== undefined
      ? `files.bandwidthBytesPerSecond`
      : `an assumed ${ASSUMED_BYTES_PER_SECOND / 1024 / 1024} MiB/s (no bandwidth cap set)`) +
    (inv.unknownSize > 0 ? `; ${inv.unknownSize} file(s) of unknown size not counted` : '')
  return { seconds: Math.max(slowest, bytesSeconds), basis }
}

/** What the job's readers are (rehost): the ids it can read, and why its connector's reader cannot be made, if it cannot. */
export interface JobReaders {
  readonly ids: ReadonlySet<string>
  readonly problem?: string
}

/** The files whose reader the job does not have, per reader. */
export function unreadableFiles(inv: FilesInventorySummary, readers: JobReaders): NonNullable<FilesPlan['unreadable']> {
  const list = Object.entries(inv.byReader)
    .filter(([reader]) => !readers.ids.has(reader))
    .map(([reader, files]) => ({ reader, files, problem: readers.problem ?? `no ${reader} reader in this job (its file source is not configured)` }))
  return { files: list.reduce((a, r) => a + r.files, 0), readers: list }
}

export function filesPlan(
  inv: FilesInventorySummary,
  settings: FilesConfig,
  reachability: FilesPlan['reachability'],
  readers?: JobReaders,
): FilesPlan {
  const warnings: string[] = []
  const unreadable = settings.mode === 'rehost' && readers !== undefined ? unreadableFiles(inv, readers) : undefined
  for (const r of unreadable?.readers ?? []) {
    warnings.push(`${r.files} file(s) for the ${r.reader} reader cannot be read: ${r.problem}`)
  }
  if (settings.mode === 'reference' && inv.files > 0) {
    warnings.push(
      `files.mode reference: ${inv.files} attachment(s) keep their legacy URLs and break when the legacy system is switched off; files.mode rehost copies them into your store`,
    )
  }
  if (reachability !== null && reachability.reachable < reachability.checked) {
    warnings.push(`${reachability.checked - reachability.reachable} of ${reachability.checked} sampled legacy attachment URLs do not answer now`)
  }
  if (inv.overMaxBytes.files > 0) {
    warnings.push(`${inv.overMaxBytes.files} file(s) over files.maxBytes (${settings.maxBytes} bytes) will fail as too-large`)
  }
  return {
    mode: settings.mode,
    files: inv.files,
    bytes: inv.bytes,
    unknownSize: inv.unknownSize,
    byType: Object.entries(inv.byType)
      .map(([type, t]) => ({ type, ...t }))
      .sort((a, b) => b.bytes - a.bytes || b.files - a.files),
    largest: inv.largest.map(entry),
    maxBytes: settings.maxBytes,
    overMaxBytes: { files: inv.overMaxBytes.files, samples: inv.overMaxBytes.samples.map(entry) },
    estimate: settings.mode === 'rehost' ? filesEstimate(inv, settings) : null,
    reachability,
    ...(unreadable !== undefined ? { unreadable } : {}),
    warnings,
  }
}
