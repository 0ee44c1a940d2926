/**
 * The CSV files of a Data Export, streamed record by record (RFC 4180: quoted cells may hold the
 * delimiter, quotes doubled, and line breaks; the delimiter is the export's `csv_delimiter`).
 * Memory is bounded by one record: a record longer than `maxRecordBytes` is one broken item and
 * the file reads on after it. The first record is the header; every later one becomes an object
 * by it (see {@link csvObject}).
 */
import { StringDecoder } from 'node:string_decoder'

export type CsvItem = { readonly index: number; readonly cells: readonly string[] } | { readonly index: number; readonly error: string }

/** The records of a CSV byte stream (index 0 is the header). */
export async function* csvRecords(
  stream: AsyncIterable<Buffer> | Iterable<Buffer>,
  delimiter: string,
  maxRecordBytes: number,
): AsyncGenerator<CsvItem> {
  const decoder = new StringDecoder('utf8')
  let cells: string[] = []
  let cell = ''
  let quoted = false
  let afterQuote = false
  let size = 0
  let index = 0
  let tooLong = false
  let pendingCr = false
  const end = (): CsvItem => {
    const item: CsvItem = tooLong ? { index, error: `record ${index} is over ${maxRecordBytes} bytes` } : { index, cells: [...cells, cell] }
    cells = []
    cell = ''
    size = 0
    tooLong = false
    index++
    return item
  }
  const blank = () => cells.length === 0 && cell === '' && !tooLong
  for await (const chunk of stream) {
    const text = decoder.write(chunk)
    for (const ch of text) {
      if (pendingCr) {
        pendingCr = false
        if (ch === '\n') {
          continue
        }
      }
      size += ch.length
      if (size > maxRecordBytes && !tooLong) {
        tooLong = true
        cell = ''
        cells = []
      }
      if (quoted) {
        if (ch === '"') {
          quoted = false
          afterQuote = true
        } else if (!tooLong) {
          cell += ch
        }
        continue
      }
      if (ch === '"') {
        if (afterQuote && !tooLong) {
          cell += '"'
        }
        quoted = true
        afterQuote = false
        continue
      }
      afterQuote = false
      if (ch === delimiter && delimiter !== '\n') {
        if (!tooLong) {
          cells.push(cell)
        }
        cell = ''
      } else if (ch === '\n' || ch === '\r') {
        pendingCr = ch === '\r'
        if (!blank()) {
          yield end()
        } else {
          size = 0
        }
      } else if (!tooLong) {
        cell += ch
      }
    }
  }
  const rest = decoder.end()
  if (rest !== '') {
    cell += rest
  }
  if (quoted) {
    yield { index, error: `record ${index} ends inside a quoted cell (the file is cut short)` }
  } else if (!blank()) {
    yield end()
  }
}

/**
 * One record as an object by the header: a column `user.user_id` becomes `{user: {user_id}}`; a
 * cell that holds a JSON object or array (`{…}`, `[…]`) is parsed; an empty cell is absent.
 */
export function csvObject(header: readonly string[], cells: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  header.forEach((name, i) => {
    const raw = cells[i]
    if (raw === undefined || raw === '') {
      return
    }
    let value: unknown = raw
    if ((raw.startsWith('{') && raw.endsWith('}')) || (raw.startsWith('[') && raw.endsWith(']'))) {
      try {
        value = JSON.parse(raw) as unknown
      } catch {
        value = raw
      }
    }
    const path = name.trim().split('.')
    let at = out
    for (const key of path.slice(0, -1)) {
      const next = at[key]
      at = (typeof next === 'object' && next !== null && !Array.isArray(next) ? next : (at[key] = {})) as Record<string, unknown>
    }
    at[path.at(-1) as string] = value
  })
  return out
}
