/**
 * Where the read of an entity starts, from its saved cursor and the run's mode: a full run resumes
 * after the saved key and skips an entity whose read completed; a delta run reads rows changed
 * since the entity's watermark less its lookback (`delta.lookbackSeconds`: rows that became visible
 * late with a change time below the watermark), resuming an interrupted delta from its key and
 * start time.
 */
import { ChatferryError } from '../errors.ts'
import type { Cursor } from '../model/connector.ts'
import type { CursorState } from '../state/index.ts'

export interface ReadWindow {
  /** True when a full run finds the entity's read complete: nothing to read. */
  readonly alreadyRead: boolean
  /** Resume after this key (undefined: from the beginning). */
  readonly after: Cursor | undefined
  /** Delta runs: rows changed at or after this time (the watermark less the lookback). */
  readonly since: number | undefined
  /** The entity's saved watermark. */
  readonly watermark: number | undefined
}

/**
 * The window of a read; throws when a delta run finds no completed full read of the entity.
 * `lookbackMs`: how far before the watermark a delta starts (never before 0).
 */
export function readWindow(entity: string, mode: 'full' | 'delta', state: CursorState | undefined, lookbackMs = 0): ReadWindow {
  const watermark = typeof state?.watermark === 'number' ? state.watermark : undefined
  if (mode === 'full' && isComplete(state?.cursor)) {
    return { alreadyRead: true, after: undefined, since: undefined, watermark }
  }
  if (mode === 'delta' && !isComplete(state?.cursor)) {
    throw new ChatferryError(
      'DELTA_BEFORE_FULL_READ',
      `a delta run needs a completed full read of ${entity} first: run \`chatferry run\` until it exits 0 or 3, then \`chatferry run --delta\``,
    )
  }
  // A delta read in progress (interrupted) keeps `complete: 1` and records where it started
  // (`delta: <since>`) beside its key: the next delta run resumes it from that key and time.
  const saved = (state?.cursor ?? undefined) as (Cursor & { complete?: unknown; delta?: unknown }) | undefined
  const resumingDelta = mode === 'delta' && typeof saved?.delta === 'number'
  const since = mode !== 'delta' ? undefined : resumingDelta ? (saved?.delta as number) : lookedBack(watermark, lookbackMs)
  const after = mode === 'full' && saved ? (saved as Cursor) : resumingDelta && saved ? keyOf(saved) : undefined
  return { alreadyRead: false, after, since, watermark }
}

/** `watermark` less `lookbackMs`, not before 0; undefined stays undefined (no watermark: read every row). */
function lookedBack(watermark: number | undefined, lookbackMs: number): number | undefined {
  return watermark === undefined ? undefined : Math.max(0, watermark - lookbackMs)
}

/** The cursor of an entity whose read finished: `{…last key, complete: 1}`. */
export function isComplete(cursor: unknown): boolean {
  return typeof cursor === 'object' && cursor !== null && (cursor as { complete?: unknown }).complete === 1
}

/** The key part of a saved cursor (without the `complete` and `delta` marks). */
function keyOf(cursor: Cursor): Cursor {
  const { complete: _c, delta: _d, ...key } = cursor as Cursor & { complete?: unknown; delta?: unknown }
  return key as Cursor
}
