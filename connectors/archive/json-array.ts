/**
 * Reads the elements of a JSON array file one by one from a byte stream, without holding the file:
 * Slack's `users.json` and `channels.json` can be hundreds of megabytes, a day file can be a
 * gigabyte. Each element is yielded as its JSON text; memory is bounded by one element, and an
 * element over `maxElementBytes` is skipped (its bytes dropped as they come) and yielded as `bad`,
 * as is one that is not UTF-8. A file that breaks off, is not an array, or cannot be read on (an
 * {@link EntryUnreadable}: corrupt, over a cap) ends with one `broken` item saying where.
 * The same bytes always yield the same items, so a count and a read agree.
 */
import { isUtf8 } from 'node:buffer'

import { EntryUnreadable } from './guard.ts'

export type ArrayItem =
  | { readonly kind: 'element'; readonly index: number; readonly text: string }
  /** One element that cannot be read (too large, not UTF-8); the elements after it are read. */
  | { readonly kind: 'bad'; readonly index: number; readonly reason: string }
  /** The read ends here; `prefixValid: false` when the items before it cannot be trusted either (a wrong CRC-32). */
  | { readonly kind: 'broken'; readonly index: number; readonly reason: string; readonly prefixValid?: false }

/** An element's text, or why it cannot be read. */
type Taken = string | { readonly bad: string }

/** Where the first byte that is not UTF-8 is, for the message (`byte 0xE9 at offset 12`). */
export function notUtf8(bytes: Buffer): string {
  const text = bytes.toString('utf8')
  const at = text.indexOf('\uFFFD')
  const offset = at < 0 ? 0 : Buffer.byteLength(text.slice(0, at))
  return `not UTF-8 text: byte 0x${(bytes[offset] ?? 0).toString(16).toUpperCase().padStart(2, '0')} at offset ${offset} of the element (Latin-1 or another legacy encoding?)`
}

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
  pendingBytes = 0
  /** The current element is over the cap: its bytes are dropped, it ends as a bad item. */
  oversized = false
  broken: string | undefined
  prefixValid = true

  readonly maxElementBytes: number

  constructor(maxElementBytes: number) {
    this.maxElementBytes = maxElementBytes
  }

  /** Feeds one chunk; returns the texts of the elements it completed. */
  feed(chunk: Buffer): Taken[] {
    const out: Taken[] = []
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
      this.pendingBytes += chunk.length - from
      if (this.pendingBytes > this.maxElementBytes) {
        this.oversized = true
        this.pending = []
      } else {
        this.pending.push(chunk.subarray(from))
      }
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

  /** The element's text (the pending bytes and `chunk[from, end)`), or why it cannot be read. */
  take(chunk: Buffer, from: number, end: number): Taken {
    const size = this.pendingBytes + end - from
    const oversized = this.oversized || size > this.maxElementBytes
    const tail = chunk.subarray(from, end)
    const bytes = oversized ? tail : this.pending.length > 0 ? Buffer.concat([...this.pending, tail]) : tail
    this.pending = []
    this.pendingBytes = 0
    this.oversized = false
    this.inElement = false
    if (oversized) {
      return { bad: `an element of ${size} bytes, over source.maxElementBytes (${this.maxElementBytes}): not read` }
    }
    return isUtf8(bytes) ? bytes.toString('utf8').trimEnd() : { bad: notUtf8(bytes) }
  }
}

/** The items of a JSON array read from `stream`, in order. */
export async function* jsonArrayItems(stream: AsyncIterable<Buffer> | Iterable<Buffer>, maxElementBytes = Infinity): AsyncGenerator<ArrayItem> {
  const s = new Splitter(maxElementBytes)
  let index = 0
  try {
    for await (const chunk of stream) {
      if (s.done) {
        // After the array: only whitespace may follow (checked to the end, or to the first byte that is not).
        s.trailing(chunk)
        if (s.broken !== undefined) {
          break
        }
        continue
      }
      for (const text of s.feed(chunk)) {
        const i = index++
        yield typeof text === 'string' ? { kind: 'element', index: i, text } : { kind: 'bad', index: i, reason: text.bad }
      }
    }
  } catch (err) {
    if (!(err instanceof EntryUnreadable)) {
      throw err
    }
    s.broken ??= `the file cannot be read from here on: ${err.message}`
    s.prefixValid = err.prefixValid
  }
  if (s.broken !== undefined) {
    yield { kind: 'broken', index, reason: s.broken, ...(s.prefixValid ? {} : { prefixValid: false as const }) }
  } else if (!s.started) {
    yield { kind: 'broken', index, reason: 'the file is empty' }
  } else if (!s.done) {
    yield { kind: 'broken', index, reason: 'the file breaks off before the array closes' }
  }
}
