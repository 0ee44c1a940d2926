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

/**
 * The lines that end in each chunk (the last one at the end of the file), as one batch per chunk.
 * The lines that lie whole inside a chunk are decoded together, in one call, when they are all
 * UTF-8 (the common case: a line is then a slice of that text); a line that spans chunks, and every
 * line of a chunk that is not all UTF-8, is gathered and checked alone.
 */
export async function* jsonLineBatches(bytes: AsyncIterable<Buffer>, maxLineBytes: number): AsyncGenerator<JsonLine[]> {
  let parts: Buffer[] = []
  let size = 0
  let oversized = false
  let line = 1
  let out: JsonLine[] = []
  const tooLarge = (n: number): JsonLine => ({
    kind: 'bad',
    line: n,
    reason: `line ${n} is larger than the ${maxLineBytes}-byte cap (maxElementBytes)`,
  })
  /** Line `n`, decoded: left out when blank, a byte order mark at its start dropped. */
  const decoded = (n: number, raw: string) => {
    const text = raw.startsWith(BOM) ? raw.slice(1) : raw
    if (text.trim() !== '') {
      out.push({ kind: 'line', line: n, text })
    }
  }
  /** Ends the line gathered in `parts`. */
  const end = () => {
    const n = line++
    if (oversized) {
      out.push(tooLarge(n))
    } else if (size > 0) {
      const buf = parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts, size)
      if (!isUtf8(buf)) {
        out.push({ kind: 'bad', line: n, reason: `line ${n} is not UTF-8 text` })
      } else {
        decoded(n, buf.toString('utf8'))
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
  /** The lines of `chunk` from `from` to the newline at `to`, each whole in it. */
  const wholeLines = (chunk: Buffer, from: number, to: number) => {
    if (!isUtf8(chunk.subarray(from, to))) {
      for (let nl = chunk.indexOf(NEWLINE, from); nl >= 0 && nl <= to; nl = chunk.indexOf(NEWLINE, from)) {
        take(chunk.subarray(from, nl), true)
        end()
        from = nl + 1
      }
      return
    }
    const text = chunk.toString('utf8', from, to)
    for (let start = 0; start <= text.length;) {
      const nl = text.indexOf('\n', start)
      const raw = text.slice(start, nl < 0 ? text.length : nl)
      const n = line++
      // A UTF-16 unit is at most 3 UTF-8 bytes: only a long line is measured.
      if (raw.length * 3 > maxLineBytes && Buffer.byteLength(raw, 'utf8') > maxLineBytes) {
        out.push(tooLarge(n))
      } else if (raw.length > 0) {
        decoded(n, raw)
      }
      start = nl < 0 ? text.length + 1 : nl + 1
    }
  }
  for await (const chunk of bytes) {
    const first = chunk.indexOf(NEWLINE)
    if (first < 0) {
      take(chunk, false)
    } else {
      take(chunk.subarray(0, first), true)
      end()
      const last = chunk.lastIndexOf(NEWLINE)
      if (last > first) {
        wholeLines(chunk, first + 1, last)
      }
      take(chunk.subarray(last + 1), false)
    }
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
