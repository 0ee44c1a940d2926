/**
 * Telling a message whose `ts` is already in an earlier day file of the same conversation (the
 * first copy is read, the later one is a problem naming both files), without holding every `ts`
 * of a conversation: for each day file read so far only the range of its `ts` is kept. Day files
 * follow each other in time, so a `ts` after every earlier range cannot repeat one (the common
 * case: one comparison). A `ts` inside an earlier file's range has that file's `ts` values read
 * (once, then kept for the rest of the conversation) to decide exactly.
 */
import type { ExportArchive } from '../archive/archive.ts'
import { sortedDay, tsOf } from './day-sort.ts'
import { tsNumber } from './entities/fields.ts'

interface DayRange {
  readonly day: string
  readonly min: number
  readonly max: number
}

export class ConversationTs {
  readonly #archive: ExportArchive
  readonly #folder: string
  readonly #maxElementBytes: number
  readonly #ranges: DayRange[] = []
  #maxSoFar = Number.NEGATIVE_INFINITY
  /** The `ts` values of earlier day files, read when a later `ts` falls in their range. */
  readonly #loaded = new Map<string, Set<string>>()
  /** The day file being read: its range so far. */
  #day: string | undefined
  #min = Number.POSITIVE_INFINITY
  #max = Number.NEGATIVE_INFINITY

  constructor(archive: ExportArchive, folder: string, maxElementBytes: number) {
    this.#archive = archive
    this.#folder = folder
    this.#maxElementBytes = maxElementBytes
  }

  /** Starts a day file (the previous one, if any, is done). */
  startDay(day: string): void {
    this.#endDay()
    this.#day = day
  }

  /**
   * The `ts` of an item of the current day file: the earlier day file that had it first, if one did.
   * Answered at once when the `ts` is after every earlier range (nearly always), else a promise.
   */
  firstDayOf(ts: string | undefined): string | undefined | Promise<string | undefined> {
    if (ts === undefined) {
      return undefined
    }
    const n = tsNumber(ts)
    this.#min = Math.min(this.#min, n)
    this.#max = Math.max(this.#max, n)
    return n > this.#maxSoFar ? undefined : this.#search(ts, n)
  }

  async #search(ts: string, n: number): Promise<string | undefined> {
    for (const r of this.#ranges) {
      if (n >= r.min && n <= r.max && (await this.#tsOf(r.day)).has(ts)) {
        return r.day
      }
    }
    return undefined
  }

  #endDay(): void {
    if (this.#day !== undefined && this.#min <= this.#max) {
      this.#ranges.push({ day: this.#day, min: this.#min, max: this.#max })
      this.#maxSoFar = Math.max(this.#maxSoFar, this.#max)
    }
    this.#day = undefined
    this.#min = Number.POSITIVE_INFINITY
    this.#max = Number.NEGATIVE_INFINITY
  }

  async #tsOf(day: string): Promise<Set<string>> {
    let set = this.#loaded.get(day)
    if (set === undefined) {
      set = new Set()
      for await (const batch of sortedDay(this.#archive, `${this.#folder}/${day}`, this.#maxElementBytes)) {
        for (const item of batch) {
          const ts = tsOf(item)
          if (ts !== undefined) {
            set.add(ts)
          }
        }
      }
      this.#loaded.set(day, set)
    }
    return set
  }

  /** The conversation's day files before `day` (a read resumed in its middle): their ranges. */
  async readBefore(days: readonly string[]): Promise<void> {
    for (const day of days) {
      this.startDay(day)
      for await (const batch of sortedDay(this.#archive, `${this.#folder}/${day}`, this.#maxElementBytes)) {
        for (const item of batch) {
          await this.firstDayOf(tsOf(item))
        }
      }
    }
    this.#endDay()
  }
}
