/**
 * After a message request answers HTTP 500 `ERR_EXCEPTION` — the platform's documented answer to a
 * bad row ("aborts the whole request with HTTP 500 (`ERR_EXCEPTION`) after the good rows have
 * already imported": the vendor's migration guidance, src/sandbox/README.md gap 2), which names no
 * row — find out which rows landed by reading them back through the chat interface
 * (`GET /messages`), instead of sending the request again (which would answer the same 500: the
 * bad row is still in it). What becomes of the rows is isolate-rows.ts's decision.
 *
 * Bounded: only the batch's sentAt ranges are listed (landed-rows.ts `readBackWindows`, at most
 * {@link MAX_WINDOWS}), at most {@link MAX_PAGES} pages of 1000 per range, each request taking a
 * slot of the app's chat budget (chat-budget.ts: `target.chatQuota`, shared by every process,
 * apart from the import quota; a chat 429 pauses it). Idempotent: it only reads, so a read-back cut
 * short by a crash, or by a stop (which cuts its waits short), leaves the batch open with its rows
 * `sent`, and the next holder sends it again —
 * the landed rows answer "already exists" (never a second copy), the bad row fails the request
 * the same way, and the same read-back gives the same outcome.
 */
import { PlatformError } from '../target/errors.ts'
import { LandedRows, landedVerdict, mergeWindows, type ReadBackWindow, readBackWindows, type RowShape, rowShapes } from './landed-rows.ts'
import type { Claim, LoaderRun } from './loader-types.ts'

/** Rows further apart than this (seconds) are listed in separate ranges. */
const WINDOW_GAP_SECONDS = 600
/** The most sentAt ranges one read-back lists (nearest ranges are merged beyond it). */
export const MAX_WINDOWS = 8
/** The most pages of one range; a range holding more messages leaves the read-back undecided. */
export const MAX_PAGES = 5
const PAGE_LIMIT = 1000

/** True for the platform's answer to a bad row in a message request of several rows: 500 `ERR_EXCEPTION`. */
export function isBadRowAnswer(c: Claim, err: unknown): err is PlatformError {
  return (
    c.entity === 'messages' &&
    c.items.length > 1 &&
    err instanceof PlatformError &&
    err.kind === 'http' &&
    err.status === 500 &&
    err.code === 'ERR_EXCEPTION'
  )
}

/** What a read-back found: the batch's rows in request order, and which of them the platform shows. */
export interface ReadBack {
  readonly rows: readonly RowShape[]
  readonly landed: LandedRows
}

/**
 * Reads the batch's rows back after a bad-row 500. Returns what it found, or undefined when it
 * could not decide (a payload it cannot read, a chat read failed, a range too full): then the
 * failure takes the ordinary path (retry, then split), which is always safe.
 */
export async function readBackBatch(run: LoaderRun, c: Claim): Promise<ReadBack | undefined> {
  const rows = rowShapes(c.items)
  if (rows === undefined) {
    return undefined
  }
  run.counters.readBacks++
  const pages = { read: 0 }
  let landed: LandedRows | undefined
  try {
    landed = await listLanded(run, rows, pages)
  } catch (e) {
    if (run.stop.signal.aborted) {
      run.log.info({ batch: c.batchId }, 'the stop cut reading the batch back short; it is handed back and read back after its next request')
    } else {
      run.log.warn({ batch: c.batchId, err: e }, 'reading the batch back after a 500 failed; it takes the ordinary path (retry, then split)')
    }
  } finally {
    // The process's chat requests so far (the lanes share the budget), 429s included.
    run.counters.chatRequests = run.chatReads.counters.requests
  }
  const verdict = landed === undefined ? 'undecided' : landedVerdict(rows.length, landed.size)
  run.log.info(
    { batch: c.batchId, rows: rows.length, landed: landed?.size, verdict, pages: pages.read },
    'read back a message batch after HTTP 500 ERR_EXCEPTION',
  )
  return landed === undefined ? undefined : { rows, landed }
}

/** Lists the batch's sentAt ranges and matches what they hold with its rows; undefined when a range was too full to finish. */
async function listLanded(run: LoaderRun, rows: readonly RowShape[], pages: { read: number }): Promise<LandedRows | undefined> {
  const landed = new LandedRows(rows, run.legacyMetadataKey)
  for (const w of mergeWindows(readBackWindows(rows, WINDOW_GAP_SECONDS), MAX_WINDOWS)) {
    if (!(await listWindow(run, w, landed, pages))) {
      return undefined
    }
  }
  return landed
}

/** Lists one range page by page until its rows are all found or it ends; false when it holds more than {@link MAX_PAGES} pages. */
async function listWindow(run: LoaderRun, w: ReadBackWindow, landed: LandedRows, pages: { read: number }): Promise<boolean> {
  const { client } = run.options
  let cursor: { id?: string; sentAt?: number } = {}
  for (let page = 0; page < MAX_PAGES; page++) {
    const res = await run.chatReads.run(
      () => client.listMessages({ fromTimestamp: w.from, toTimestamp: w.to, limit: PAGE_LIMIT, affix: 'append', ...cursor }),
      run.stop.signal,
    )
    pages.read++
    for (const m of res.data) {
      landed.see(m)
    }
    const next = res.meta.next
    if (w.keys.every((k) => landed.has(k)) || res.data.length === 0 || next === undefined || next.id === undefined) {
      return true
    }
    cursor = { id: next.id, ...(next.sentAt !== undefined ? { sentAt: next.sentAt } : {}) }
  }
  return w.keys.every((k) => landed.has(k))
}
