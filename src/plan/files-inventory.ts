/**
 * What `plan` knows of a job's files before copying any (issue 27): every distinct file of the
 * messages it read (by reader and ref, as the ledger keys them), counted by type with the bytes
 * the legacy records state, the largest, those over `files.maxBytes`, and a few URLs kept as a
 * sample for the reachability check of `files.mode: reference`. Sizes a record does not state
 * are counted as unknown, never guessed.
 */
import type { PlannedFile } from '../state/index.ts'

const LARGEST = 10
const SAMPLE = 20

export interface FileInventoryEntry {
  readonly name: string
  readonly url: string
  readonly size: number | undefined
  readonly type: string
}

export interface FilesInventorySummary {
  readonly files: number
  /** Bytes of the files whose size the record states. */
  readonly bytes: number
  readonly unknownSize: number
  readonly byType: Record<string, { files: number; bytes: number }>
  /** The largest by stated size, largest first. */
  readonly largest: FileInventoryEntry[]
  readonly overMaxBytes: { files: number; samples: FileInventoryEntry[] }
  /** The first files read, for the reachability check. */
  readonly sample: FileInventoryEntry[]
  /** Files per source host (what the lane paces by). */
  readonly byHost: Record<string, number>
  /** Files per reader their locators name (`http`, a connector's id). */
  readonly byReader: Record<string, number>
}

export class FilesInventory {
  readonly #seen = new Set<string>()
  #bytes = 0
  #unknown = 0
  readonly #byType: Record<string, { files: number; bytes: number }> = {}
  readonly #byHost: Record<string, number> = {}
  readonly #byReader: Record<string, number> = {}
  #largest: FileInventoryEntry[] = []
  #over = 0
  readonly #overSamples: FileInventoryEntry[] = []
  readonly #sample: FileInventoryEntry[] = []

  readonly #maxBytes: number

  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes
  }

  add(file: PlannedFile): void {
    const key = `${file.locator.reader}:${file.locator.ref}`
    if (this.#seen.has(key)) {
      return
    }
    this.#seen.add(key)
    const entry: FileInventoryEntry = { name: file.name, url: file.url, size: file.size, type: file.type ?? 'unknown' }
    const t = (this.#byType[entry.type] ??= { files: 0, bytes: 0 })
    t.files++
    this.#byHost[file.locator.host] = (this.#byHost[file.locator.host] ?? 0) + 1
    this.#byReader[file.locator.reader] = (this.#byReader[file.locator.reader] ?? 0) + 1
    if (this.#sample.length < SAMPLE) {
      this.#sample.push(entry)
    }
    if (file.size === undefined) {
      this.#unknown++
      return
    }
    this.#bytes += file.size
    t.bytes += file.size
    if (file.size > this.#maxBytes) {
      this.#over++
      if (this.#overSamples.length < LARGEST) {
        this.#overSamples.push(entry)
      }
    }
    if (this.#largest.length < LARGEST || file.size > (this.#largest[this.#largest.length - 1]?.size ?? 0)) {
      this.#largest = [...this.#largest, entry].sort((a, b) => (b.size ?? 0) - (a.size ?? 0)).slice(0, LARGEST)
    }
  }

  summary(): FilesInventorySummary {
    return {
      files: this.#seen.size,
      bytes: this.#bytes,
      unknownSize: this.#unknown,
      byType: this.#byType,
      largest: this.#largest,
      overMaxBytes: { files: this.#over, samples: this.#overSamples },
      sample: this.#sample,
      byHost: this.#byHost,
      byReader: this.#byReader,
    }
  }
}
