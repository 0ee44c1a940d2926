/**
 * Splits a line-separated JSON file (Stream Chat's v2 channel export: one entity per line) into its
 * lines as they stream past, a chunk's lines at a time. Memory is bounded by one chunk and one
 * line: a line over `maxLineBytes` is dropped as it streams and yielded as `bad`, as is one that is
 * not UTF-8. Blank lines are skipped; every other line keeps its 1-based number, so a problem
 * names where it is.
 */
import { isUtf8 } from 'node:buffer'

export type JsonLine =
  { readonly kind: 'line'; readonly line: number; readonly text: string } | { readonly kind: 'bad'; readonly line: number; readonly reason: string }

const NEWLINE = 0x0a
const BOM = '\uFEFF'

/** The lines that end in each chunk (the last one at the end of the file), as one batch per chunk. */
export async function* jsonLineBatches(bytes: AsyncIterable<Buffer>, maxLineBytes: number): AsyncGenerator<JsonLine[]> {
  let parts: Buffer[] = []
  let size = 0
  let oversized = false
  let line = 1
  let out: JsonLine[] = []
  const end = () => {
    const n = line++
    if (oversized) {
      out.push({ kind: 'bad', line: n, reason: `line ${n} is larger than the ${maxLineBytes}-byte cap (maxElementBytes)` })
    } else if (size > 0) {
      const buf = parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts, size)
      if (!isUtf8(buf)) {
        out.push({ kind: 'bad', line: n, reason: `line ${n} is not UTF-8 text` })
      } else {
        const raw = buf.toString('utf8')
        const text = raw.startsWith(BOM) ? raw.slice(1) : raw
        if (text.trim() !== '') {
          out.push({ kind: 'line', line: n, text })
        }
      }
    }
    parts = []
    size = 0
    oversized = false
  }
  /** Keeps part of a line; `whole` when the line ends in this chunk, so the bytes need no copy. */
  const take = (part: Buffer, whole: boolean) => {
    if (oversized || part.length === 0) {
      return
    }
    size += part.length
    if (size > maxLineBytes) {
      oversized = true
      parts = []
      return
    }
    parts.push(whole ? part : Buffer.from(part))
  }
  for await (const chunk of bytes) {
    let from = 0
    for (let nl = chunk.indexOf(NEWLINE, from); nl >= 0; nl = chunk.indexOf(NEWLINE, from)) {
      take(chunk.subarray(from, nl), true)
      end()
      from = nl + 1
    }
    take(chunk.subarray(from), false)
    if (out.length > 0) {
      yield out
      out = []
    }
  }
  end()
  if (out.length > 0) {
    yield out
  }
}

/** The lines one by one. */
export async function* jsonLines(bytes: AsyncIterable<Buffer>, maxLineBytes: number): AsyncGenerator<JsonLine> {
  for await (const batch of jsonLineBatches(bytes, maxLineBytes)) {
    yield* batch
  }
}
