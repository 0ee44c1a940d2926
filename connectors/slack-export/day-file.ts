/**
 * One per-conversation per-day file (`general/2024-01-02.json`): a JSON array of messages, small
 * enough to parse whole. When it does not parse, the messages before the break are still read one
 * by one and the break is one broken item.
 */
import { Readable } from 'node:stream'

import type { ExportArchive } from './archive/archive.ts'
import { jsonArrayItems } from './json-array.ts'

/** A day file's name: `YYYY-MM-DD.json`. Other files in a folder (canvases, attachments) are not messages. */
export const DAY_FILE = /^\d{4}-\d{2}-\d{2}\.json$/

export type ParsedItem = { readonly index: number; readonly value: unknown } | { readonly index: number; readonly error: string }

/** Parses one array element's text. */
export function parseElement(index: number, text: string): ParsedItem {
  if (text === '') {
    return { index, error: 'empty array element' }
  }
  try {
    return { index, value: JSON.parse(text) as unknown }
  } catch (err) {
    return { index, error: `broken JSON: ${(err as Error).message}` }
  }
}

/** The items of a JSON array file read whole: its elements, or what could be salvaged and the break. */
export async function readArrayFile(archive: ExportArchive, path: string): Promise<ParsedItem[]> {
  const bytes = await archive.read(path)
  let whole: unknown
  try {
    whole = JSON.parse(bytes.toString('utf8'))
  } catch {
    const items: ParsedItem[] = []
    for await (const item of jsonArrayItems(Readable.from([bytes]))) {
      items.push(item.kind === 'element' ? parseElement(item.index, item.text) : { index: item.index, error: item.reason })
    }
    return items
  }
  if (!Array.isArray(whole)) {
    return [{ index: 0, error: 'the file is not a JSON array' }]
  }
  return whole.map((value: unknown, index) => ({ index, value }))
}
