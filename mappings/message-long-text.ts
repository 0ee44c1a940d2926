/**
 * The `longText` policy of `mapMessage`: a text that does not fit in the 10 KB of `data` is split
 * into parts (`<muid>`, `<muid>-p2`, …; at most `longText.maxParts`) or truncated with a marker.
 */
import type { JsonObject } from '../src/model/index.ts'
import { LIMITS } from '../src/target/schemas.ts'
import { Rejection } from './common.ts'
import type { MessageDataBuilder } from './message-data-builder.ts'
import type { MessageScope } from './message-scope.ts'
import { jsonTextBytes, splitText, truncateText } from './text.ts'

/** Reserved in each part's metadata for the part marker (`{"part":{"n":…,"of":…,"first":"<muid>"}}`). */
const PART_RESERVE_BYTES = 160
/** Below this many bytes of room for text, a message is not split: its other data is too large. */
const MIN_PART_BYTES = 512

/** The texts of the message's parts: `[text]` when it fits, once `fieldLimits` has made room. */
export function fitLongText({ ctx, out }: MessageScope, text: string, data: MessageDataBuilder): string[] {
  const max = LIMITS.MESSAGE_DATA_BYTES_MAX
  const p = ctx.policies.longText
  const textBytes = jsonTextBytes(text)
  const skeleton = data.makeRoom(Math.min(textBytes, MIN_PART_BYTES))
  if (text === '' || skeleton + textBytes <= max) {
    return [text]
  }
  if (p.mode === 'truncate') {
    const truncated = truncateText(text, max - data.skeletonBytes({ truncated: true }), p.truncationMarker)
    out.add('longText', 'truncated')
    return [truncated]
  }
  const parts = splitText(text, max - data.skeletonBytes() - PART_RESERVE_BYTES, p.maxParts)
  if (parts === undefined) {
    throw new Rejection('text', `text needs more than longText.maxParts (${p.maxParts}) parts`, 'longText')
  }
  out.add('longText', 'split')
  return parts
}

/** chatferry's metadata for part `i` (from 0) of `texts`: the part marker, or `truncated`. */
export function partMarker(texts: readonly string[], i: number, text: string, muid: string): JsonObject | undefined {
  if (texts.length > 1) {
    return { part: { n: i + 1, of: texts.length, first: muid } }
  }
  return texts[0] !== text ? { truncated: true } : undefined
}
