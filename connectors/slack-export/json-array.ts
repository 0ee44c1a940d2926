/**
 * Reads the elements of a JSON array file one by one from a byte stream, without holding the file:
 * Slack's `users.json` and `channels.json` can be hundreds of megabytes. Each element is yielded as
 * its JSON text; a file that breaks off or is not an array ends with one `broken` item saying where.
 * The same bytes always yield the same items, so a count and a read agree.
 */
import type { Readable } from 'node:stream'

export type ArrayItem =
  | { readonly kind: 'element'; readonly index: number; readonly text: string }
  | { readonly kind: 'broken'; readonly index: number; readonly reason: string }

const OPEN_ARRAY = 0x5b // [
const CLOSE_ARRAY = 0x5d // ]
const OPEN_OBJECT = 0x7b // {
const CLOSE_OBJECT = 0x7d // }
const QUOTE = 0x22
const BACKSLASH = 0x5c
const COMMA = 0x2c

const isSpace = (b: number) => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09
const isBomByte = (b: number) => b === 0xef || b === 0xbb || b === 0xbf

/** The splitter's state between chunks. */
class Splitter {
  started = false
  done = false
  depth = 0
  inString = false
  escaped = false
  inElement = false
  /** Bytes of the current element from earlier chunks. */
  pending: Buffer[] = []
  broken: string | undefined

  /** Feeds one chunk; returns the texts of the elements it completed. */
  feed(chunk: Buffer): string[] {
    const out: string[] = []
    let i = this.started ? 0 : this.skipOpening(chunk)
    if (i < 0) {
      return out
    }
    let from = this.inElement ? 0 : -1
    for (; i < chunk.length; i++) {
      const b = chunk[i] as number
      if (this.inString) {
        if (this.escaped) {
          this.escaped = false
        } else if (b === BACKSLASH) {
          this.escaped = true
        } else if (b === QUOTE) {
          this.inString = false
        }
        continue
      }
      if (!this.inElement) {
        if (isSpace(b)) {
          continue
        }
        if (b === CLOSE_ARRAY) {
          this.close(chunk, i + 1)
          return out
        }
        if (b === COMMA) {
          out.push('') // `[1,,2]`: an empty element is a broken one
          continue
        }
        this.inElement = true
        from = i
      }
      if (b === QUOTE) {
        this.inString = true
      } else if (b === OPEN_OBJECT || b === OPEN_ARRAY) {
        this.depth++
      } else if (b === CLOSE_OBJECT || b === CLOSE_ARRAY) {
        if (this.depth > 0) {
          this.depth--
        } else {
          out.push(this.take(chunk, from, i))
          this.close(chunk, i + 1)
          return out
        }
      } else if (b === COMMA && this.depth === 0) {
        out.push(this.take(chunk, from, i))
      }
    }
    if (this.inElement) {
      this.pending.push(chunk.subarray(from))
    }
    return out
  }

  /** The array closed at `chunk[from - 1]`: whatever follows must be whitespace. */
  close(chunk: Buffer, from: number): void {
    this.done = true
    this.trailing(chunk.subarray(from))
  }

  /**
   * Checks bytes after the array's end: anything but whitespace (a second array of files
   * concatenated, garbage) is content that would otherwise vanish without a word.
   */
  trailing(bytes: Buffer): void {
    if (this.broken === undefined && bytes.some((b) => !isSpace(b))) {
      this.broken = 'content after the array closes: the rest of the file cannot be read'
    }
  }

  /** Skips to after the opening `[`; -1 when the chunk ends first or the file is not an array. */
  skipOpening(chunk: Buffer): number {
    let i = 0
    // Whitespace and a UTF-8 byte order mark (EF BB BF, possibly split across chunks) before the `[`.
    while (i < chunk.length && (isSpace(chunk[i] as number) || isBomByte(chunk[i] as number))) {
      i++
    }
    if (i === chunk.length) {
      return -1
    }
    if (chunk[i] !== OPEN_ARRAY) {
      this.broken = 'the file is not a JSON array'
      this.done = true
      return -1
    }
    this.started = true
    return i + 1
  }

  /** The element's text: the pending bytes and `chunk[from, end)`. */
  take(chunk: Buffer, from: number, end: number): string {
    const tail = chunk.subarray(from, end)
    const bytes = this.pending.length > 0 ? Buffer.concat([...this.pending, tail]) : tail
    this.pending = []
    this.inElement = false
    return bytes.toString('utf8').trimEnd()
  }
}

/** The items of a JSON array read from `stream`, in order. */
export async function* jsonArrayItems(stream: Readable): AsyncGenerator<ArrayItem> {
  const s = new Splitter()
  let index = 0
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      if (s.done) {
        // After the array: only whitespace may follow (checked to the end, or to the first byte that is not).
        s.trailing(chunk)
        if (s.broken !== undefined) {
          break
        }
        continue
      }
      for (const text of s.feed(chunk)) {
        yield { kind: 'element', index: index++, text }
      }
    }
  } finally {
    stream.destroy()
  }
  if (s.broken !== undefined) {
    yield { kind: 'broken', index, reason: s.broken }
  } else if (!s.started) {
    yield { kind: 'broken', index, reason: 'the file is empty' }
  } else if (!s.done) {
    yield { kind: 'broken', index, reason: 'the file breaks off before the array closes' }
  }
}
