/**
 * Picks values out of one large JSON document as its bytes stream past, without holding the
 * document: a Stream Chat channel export (v1) is one JSON text whose `messages` arrays can hold a
 * channel's whole history. The caller names the paths it wants (`[0, 'messages', 17]`); each value
 * found at one is yielded as its text, in document order: a wanted object or array is delimited
 * by its brackets alone, so its text can still fail `JSON.parse` (the caller's bad item for that
 * value; the read goes on). Memory is bounded by one wanted value: one over `maxValueBytes` is
 * dropped as it streams and yielded as `bad`, as is one that is not UTF-8. A document that breaks
 * off, whose brackets do not match, or that is not JSON outside its wanted values ends with one
 * `broken` item saying where. A wanted value the caller only counts (`unread`) is followed the
 * same way and yields an `unread` item in its place, without its text.
 * The same bytes always yield the same items in the same places, so a count and a read agree.
 */
import { isUtf8 } from 'node:buffer'

/** A path into the document: object keys and array indexes from the root. */
export type JsonPath = readonly (string | number)[]

export type JsonValueItem<T> =
  | { readonly kind: 'value'; readonly tag: T; readonly path: JsonPath; readonly text: string }
  | { readonly kind: 'bad'; readonly tag: T; readonly path: JsonPath; readonly reason: string }
  /** A wanted value the caller asked only to be counted (`options.unread`): followed to its end, never kept. */
  | { readonly kind: 'unread'; readonly tag: T; readonly path: JsonPath }
  | { readonly kind: 'broken'; readonly reason: string }

/** Says whether the value at `path` is wanted (its tag) or not (undefined). Asked only down to `maxDepth`. */
export type WantValue<T> = (path: JsonPath) => T | undefined

export interface JsonValueOptions<T> {
  /** The deepest path `want` is asked about (the stack depth of a value's container). */
  readonly maxDepth: number
  readonly maxValueBytes: number
  /**
   * Tags whose values are only counted: each yields an `unread` item where it ends, its bytes
   * followed (brackets, strings) exactly as a kept value's, so the document's structure and the
   * items' order are the same as when it is kept — only its text is not (no copy, no UTF-8 check,
   * no size cap: it is never held).
   */
  readonly unread?: (tag: T) => boolean
}

interface Frame {
  readonly object: boolean
  /** The current key (objects) or the index of the current element (arrays, -1 before the first). */
  key: string | number
  /** Objects: the next string is a key. */
  expectKey: boolean
}

interface Capture<T> {
  readonly tag: T
  readonly path: JsonPath
  /** The stack depth the value started at: it ends when the stack is back to it. */
  readonly depth: number
  parts: Buffer[]
  bytes: number
  oversized: boolean
  /** Only counted: nothing of it is kept. */
  readonly unread: boolean
}

const UTF8_BOM = [0xef, 0xbb, 0xbf]
/** The key of a frame whose keys are not kept. */
const UNREAD_KEY = '\u0000'
const QUOTE = 0x22
const BACKSLASH = 0x5c
const isSpace = (b: number) => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09
/** Bytes that end a number or a literal. */
const isDelimiter = (b: number) => isSpace(b) || b === 0x2c || b === 0x5d || b === 0x7d

class Scanner<T> {
  readonly stack: Frame[] = []
  inString = false
  escaped = false
  /** The string being read is a key. */
  inKey = false
  /** The key's bytes, kept only where a path can be asked about (down to `maxDepth`, outside a captured value). */
  keyBytes: number[] | undefined
  inScalar = false
  /** A value may start at the next non-space byte. */
  valueExpected = true
  rootDone = false
  capture: Capture<T> | undefined
  offset = 0
  broken: string | undefined
  readonly out: JsonValueItem<T>[] = []

  readonly want: WantValue<T>
  readonly maxDepth: number
  readonly maxValueBytes: number
  readonly unread: ((tag: T) => boolean) | undefined

  constructor(want: WantValue<T>, options: JsonValueOptions<T>) {
    this.want = want
    this.maxDepth = options.maxDepth
    this.maxValueBytes = options.maxValueBytes
    this.unread = options.unread
  }

  path(): JsonPath {
    return this.stack.map((f) => f.key)
  }

  fail(at: number, reason: string): void {
    this.broken = `${reason} at byte ${this.offset + at}`
  }

  /** A value starts at byte `i` of `chunk`: maybe capture it. */
  startValue(i: number): void {
    const top = this.stack.at(-1)
    if (top !== undefined && !top.object) {
      top.key = (top.key as number) + 1
    }
    this.valueExpected = false
    if (this.capture === undefined && this.stack.length <= this.maxDepth) {
      const path = this.path()
      const tag = this.want(path)
      if (tag !== undefined) {
        const unread = this.unread?.(tag) === true
        this.capture = { tag, path, depth: this.stack.length, parts: [], bytes: 0, oversized: false, unread }
        this.captureFrom = i
      }
    }
  }

  /** Where the capture starts in the current chunk (0 when it began in an earlier one). */
  captureFrom = 0

  /** The captured value ends after byte `end - 1` of `chunk`. */
  endValue(chunk: Buffer, end: number): void {
    const c = this.capture
    if (c === undefined || this.stack.length !== c.depth) {
      return
    }
    if (c.unread) {
      this.capture = undefined
      this.out.push({ kind: 'unread', tag: c.tag, path: c.path })
      return
    }
    const tail = chunk.subarray(this.captureFrom, end)
    // A value that began in this chunk is read from it in place; one that began earlier is joined.
    const whole = c.parts.length === 0 && !c.oversized && c.bytes + tail.length <= this.maxValueBytes
    if (!whole) {
      this.keep(tail)
    }
    this.capture = undefined
    if (c.oversized) {
      this.out.push({ kind: 'bad', tag: c.tag, path: c.path, reason: `larger than the ${this.maxValueBytes}-byte cap (maxElementBytes)` })
      return
    }
    const bytes = whole ? tail : Buffer.concat(c.parts, c.bytes)
    if (!isUtf8(bytes)) {
      this.out.push({ kind: 'bad', tag: c.tag, path: c.path, reason: 'not UTF-8 text' })
      return
    }
    this.out.push({ kind: 'value', tag: c.tag, path: c.path, text: bytes.toString('utf8') })
  }

  keep(part: Buffer): void {
    const c = this.capture
    if (c === undefined || c.oversized || c.unread) {
      return
    }
    c.bytes += part.length
    if (c.bytes > this.maxValueBytes) {
      c.oversized = true
      c.parts = []
      return
    }
    c.parts.push(Buffer.from(part))
  }

  /** After a value ended in a container: what may follow. */
  afterValue(): void {
    if (this.stack.length === 0) {
      this.rootDone = true
    }
  }

  /** Where the chunk's next backslash is at or after `from` (-1: none), found once per stretch. */
  nextBackslash = -1

  /**
   * The closing quote of the string being read from byte `from` on, found with `indexOf` rather
   * than byte by byte (strings are most of an export's bytes); -1 when the string goes on past the
   * chunk (`escaped` set when the chunk ends inside an escape).
   */
  stringEnd(chunk: Buffer, from: number): number {
    let at = from
    const text = this.bytesAsText
    for (;;) {
      const quote = text.indexOf('"', at)
      if (this.nextBackslash < at && this.nextBackslash !== -2) {
        const found = text.indexOf('\\', at)
        this.nextBackslash = found === -1 ? -2 : found // -2: none left in this chunk
      }
      const backslash = this.nextBackslash
      if (backslash < 0 || (quote !== -1 && quote < backslash)) {
        return quote
      }
      at = backslash + 2 // the escaped byte is never the end
      if (at > chunk.length) {
        this.escaped = true
        return -1
      }
    }
  }

  /**
   * The chunk's bytes, one character each (latin1), so a character's index is its byte's offset:
   * searched with `String#indexOf`, a builtin, rather than `Buffer#indexOf`, a call into C++ that
   * cost more than the search itself (2.7 µs a message of the 4.3 of a scan, 100k messages). A
   * quote or backslash byte (< 0x80) is never part of a multi-byte UTF-8 character.
   */
  bytesAsText = ''

  feed(chunk: Buffer): void {
    this.nextBackslash = -1
    this.bytesAsText = chunk.toString('latin1')
    for (let i = 0; i < chunk.length && this.broken === undefined; i++) {
      if (this.capture !== undefined && this.stack.length > this.capture.depth && !this.inString) {
        i = this.skipCaptured(chunk, i)
        continue
      }
      if (this.inString && this.keyBytes === undefined && !this.escaped) {
        const end = this.stringEnd(chunk, i)
        if (end < 0) {
          break
        }
        i = end
      }
      const b = chunk[i] as number
      if (this.inString) {
        this.readStringByte(chunk, i, b)
        continue
      }
      if (this.inScalar) {
        if (!isDelimiter(b)) {
          continue
        }
        this.inScalar = false
        this.endValue(chunk, i)
        this.afterValue()
      }
      if (isSpace(b)) {
        continue
      }
      if (this.offset + i < 3 && b === UTF8_BOM[this.offset + i]) {
        continue // a UTF-8 byte order mark
      }
      this.structural(chunk, i, b)
    }
    if (this.capture !== undefined && !this.capture.unread && this.broken === undefined) {
      this.keep(chunk.subarray(this.captureFrom))
      this.captureFrom = 0
    }
    this.offset += chunk.length
  }

  /**
   * Inside a captured object or array, from byte `from` on: only its brackets are followed (to find
   * where it ends; a `}` where a `]` belongs still breaks the document) and its strings skipped with
   * `indexOf`; its keys, commas and scalars are left to `JSON.parse` of the whole value, which
   * makes any other mistake in it that value's own `bad` item. Returns the last byte it consumed.
   * It closes a bracket itself rather than through `close` (whose other checks cannot fail here):
   * through `close`, 1 µs more a message (100k, 8 alternated rounds).
   */
  skipCaptured(chunk: Buffer, from: number): number {
    const depth = (this.capture as Capture<T>).depth
    for (let i = from; i < chunk.length; i++) {
      const b = chunk[i] as number
      if (b === QUOTE) {
        const end = this.stringEnd(chunk, i + 1)
        if (end < 0) {
          this.inString = true // it goes on in the next chunk
          return chunk.length - 1
        }
        i = end
      } else if (b === 0x7b || b === 0x5b) {
        this.stack.push({ object: b === 0x7b, key: '', expectKey: false })
      } else if (b === 0x7d || b === 0x5d) {
        if ((this.stack.at(-1) as Frame).object !== (b === 0x7d)) {
          this.fail(i, `unexpected ${b === 0x7d ? '"}"' : '"]"'}`)
          return i
        }
        this.stack.pop()
        if (this.stack.length === depth) {
          this.valueExpected = false
          this.endValue(chunk, i + 1)
          this.afterValue()
          return i
        }
      }
    }
    return chunk.length - 1
  }

  readStringByte(chunk: Buffer, i: number, b: number): void {
    if (this.escaped) {
      this.escaped = false
    } else if (b === BACKSLASH) {
      this.escaped = true
    } else if (b === QUOTE) {
      this.inString = false
      if (this.inKey) {
        const top = this.stack.at(-1) as Frame
        // A key no path is asked about is only known to be there (not empty: `{"a":1,}` still fails).
        top.key = this.keyBytes !== undefined ? (JSON.parse(`"${Buffer.from(this.keyBytes).toString('utf8')}"`) as string) : UNREAD_KEY
        top.expectKey = false
        this.keyBytes = undefined
        this.inKey = false
        return
      }
      this.endValue(chunk, i + 1)
      this.afterValue()
      return
    }
    this.keyBytes?.push(b)
  }

  structural(chunk: Buffer, i: number, b: number): void {
    if (this.rootDone) {
      this.fail(i, 'more text after the JSON document')
      return
    }
    const top = this.stack.at(-1)
    if (top?.object === true && top.expectKey) {
      if (b === QUOTE) {
        this.inString = true
        this.inKey = true
        this.keyBytes = this.capture === undefined && this.stack.length <= this.maxDepth ? [] : undefined
      } else if (b === 0x7d && top.key === '') {
        this.close(chunk, i, true)
      } else {
        this.fail(i, `expected a key, found ${JSON.stringify(String.fromCharCode(b))}`)
      }
      return
    }
    if (b === 0x3a /* : */) {
      if (top?.object !== true || this.valueExpected) {
        this.fail(i, 'unexpected ":"')
      }
      this.valueExpected = true
      return
    }
    if (b === 0x2c /* , */) {
      if (top === undefined || this.valueExpected) {
        this.fail(i, 'unexpected ","')
        return
      }
      if (top.object) {
        top.expectKey = true
      } else {
        this.valueExpected = true
      }
      return
    }
    if (b === 0x5d || b === 0x7d) {
      this.close(chunk, i, b === 0x7d)
      return
    }
    if (!this.valueExpected) {
      this.fail(i, `unexpected ${JSON.stringify(String.fromCharCode(b))}`)
      return
    }
    this.startValue(i)
    if (b === 0x7b || b === 0x5b) {
      this.stack.push({ object: b === 0x7b, key: b === 0x7b ? '' : -1, expectKey: b === 0x7b })
      this.valueExpected = b === 0x5b
    } else if (b === QUOTE) {
      this.inString = true
    } else {
      this.inScalar = true
    }
  }

  /** A `}` or `]` at byte `i`. */
  close(chunk: Buffer, i: number, object: boolean): void {
    const top = this.stack.at(-1)
    if (top === undefined || top.object !== object) {
      this.fail(i, `unexpected ${object ? '"}"' : '"]"'}`)
      return
    }
    // `[` then `]` (empty array) is fine; `,` then `]` (a trailing comma) is not.
    if (!object && this.valueExpected && top.key !== -1) {
      this.fail(i, 'a trailing ","')
      return
    }
    this.stack.pop()
    this.valueExpected = false
    this.endValue(chunk, i + 1)
    this.afterValue()
  }

  finish(): void {
    if (this.broken === undefined && this.inScalar) {
      this.inScalar = false
      this.endValue(Buffer.alloc(0), 0)
      this.afterValue()
    }
    if (this.broken === undefined && (!this.rootDone || this.inString)) {
      this.broken = `the document breaks off at byte ${this.offset} (${this.stack.length} levels open)`
    }
  }
}

/**
 * The wanted values of the JSON document in `bytes`, in document order, in batches (those each
 * chunk completes; a `broken` item ends the last).
 */
export async function* jsonValueBatches<T>(
  bytes: AsyncIterable<Buffer>,
  want: WantValue<T>,
  options: JsonValueOptions<T>,
): AsyncGenerator<JsonValueItem<T>[]> {
  const s = new Scanner(want, options)
  for await (const chunk of bytes) {
    s.feed(chunk)
    const out = s.out.splice(0)
    if (s.broken !== undefined) {
      out.push({ kind: 'broken', reason: s.broken })
      yield out
      return
    }
    if (out.length > 0) {
      yield out
    }
  }
  s.finish()
  const out = s.out.splice(0)
  if (s.broken !== undefined) {
    out.push({ kind: 'broken', reason: s.broken })
  }
  if (out.length > 0) {
    yield out
  }
}

/** The wanted values one by one (see {@link jsonValueBatches}). */
export async function* jsonValues<T>(
  bytes: AsyncIterable<Buffer>,
  want: WantValue<T>,
  options: JsonValueOptions<T>,
): AsyncGenerator<JsonValueItem<T>> {
  for await (const batch of jsonValueBatches(bytes, want, options)) {
    yield* batch
  }
}
