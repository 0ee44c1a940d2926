/**
 * `zerver_message.edit_history`: a JSON list of past edits, each `{user_id, timestamp (epoch s),
 * prev_content?, prev_topic?, topic?, prev_stream?, stream?, …}` (Zulip's EditHistoryEvent; before
 * 2022 a topic change was `prev_subject`). Only a summary is kept: the text is the latest.
 */
import type { JsonObject } from '../../../src/model/records.ts'
import { decodeJson, FieldProblem } from '../../sql/decode.ts'

export interface EditSummary {
  /** The latest edit's time (epoch ms), when the history has one. */
  readonly lastAt?: number
  readonly metadata?: JsonObject
}

export function summariseEditHistory(value: unknown, lossy: boolean): EditSummary {
  const list = decodeJson('edit_history', value, 'array', lossy)
  if (list === undefined || list.length === 0) {
    return {}
  }
  let lastAt: number | undefined
  let contentEdits = 0
  const topics: string[] = []
  const streams: number[] = []
  for (const e of list) {
    if (typeof e !== 'object' || e === null || Array.isArray(e)) {
      throw new FieldProblem('edit_history', 'expected a JSON list of objects')
    }
    const event = e as Record<string, unknown>
    if (typeof event.timestamp !== 'number' || !Number.isFinite(event.timestamp) || event.timestamp < 0) {
      throw new FieldProblem('edit_history', `an edit without a valid timestamp: ${JSON.stringify(event.timestamp ?? null)}`)
    }
    lastAt = Math.max(lastAt ?? 0, Math.floor(event.timestamp * 1000))
    if ('prev_content' in event) {
      contentEdits++
    }
    const prevTopic = event.prev_topic ?? event.prev_subject
    if (typeof prevTopic === 'string' && !topics.includes(prevTopic)) {
      topics.push(prevTopic)
    }
    if (typeof event.prev_stream === 'number' && !streams.includes(event.prev_stream)) {
      streams.push(event.prev_stream)
    }
  }
  const metadata: JsonObject = { edits: list.length, contentEdits }
  if (topics.length > 0) {
    metadata.previousTopics = topics
  }
  if (streams.length > 0) {
    metadata.previousStreamIds = streams
  }
  return lastAt === undefined ? { metadata } : { lastAt, metadata }
}
