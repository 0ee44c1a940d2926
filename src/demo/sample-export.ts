/**
 * The sources `chatferry demo --source <name>` can read the sample history from: the in-house
 * SQLite database itself (`sql`, the generic-sql connector), or the same history written in a hosted
 * service's export layout (`sendbird-export`, `stream-chat-export`). Each export names the
 * `source:` block that reads it and its planted bad rows (the demo checks each is quarantined).
 */
import { mkdirSync } from 'node:fs'

import { readSampleRows, type SampleExport } from './sample-rows.ts'
import { writeSendbirdExport } from './sample-sendbird.ts'
import { writeStreamChatExport } from './sample-stream-chat.ts'

export const DEMO_SOURCES = ['sql', 'sendbird-export', 'stream-chat-export'] as const
export type DemoSource = (typeof DEMO_SOURCES)[number]

export type { SampleExport } from './sample-rows.ts'

/** Writes the sample database at `sqlitePath` in the layout of `source` under `dir`. */
export function writeSampleExport(source: Exclude<DemoSource, 'sql'>, sqlitePath: string, dir: string): SampleExport {
  const rows = readSampleRows(sqlitePath)
  mkdirSync(dir, { recursive: true })
  return source === 'sendbird-export' ? writeSendbirdExport(rows, dir) : writeStreamChatExport(rows, dir)
}
