/**
 * The bytes of one entry as they are inflated, checked as they come: never more than the entry's
 * cap (the smaller of `source.maxEntryBytes` and the size the ZIP's directory declares — a ZIP bomb
 * declares a small size or inflates past it, and is stopped at the cap either way), and, for a
 * ZIP, the CRC-32 its directory records. Whatever makes an entry unreadable for good (a corrupt
 * deflate stream, a wrong CRC, bytes over the cap) is an {@link EntryUnreadable}: the read of the
 * entity reports it as a problem naming the entry; an I/O error of the disk stays what it is.
 */
import { crc32 } from 'node:zlib'

/** An entry of the export that cannot be read, whatever the number of attempts. */
export class EntryUnreadable extends Error {
  /** The entry and the export (`entry general/2024-01-02.json of ./export.zip`). */
  readonly entry: string
  /**
   * Whether the bytes read before the failure are the entry's own (a deflate stream that breaks,
   * a cap reached): then the elements before the break can be read. False for a wrong CRC-32,
   * found only at the end: any byte may be wrong.
   */
  readonly prefixValid: boolean
  /** `reason` says what is wrong as a predicate: `is corrupt: …`, `inflates past …`. */
  constructor(entry: string, reason: string, options?: { cause?: unknown; prefixValid?: boolean }) {
    super(`${entry} ${reason}`, options)
    this.name = 'EntryUnreadable'
    this.entry = entry
    this.prefixValid = options?.prefixValid ?? true
  }
}

/** True for an error of the operating system (EIO, EMFILE…): not a fact about the entry's bytes. */
const isSystemError = (err: unknown) => err instanceof Error && typeof (err as NodeJS.ErrnoException).syscall === 'string'

export interface GuardOptions {
  /** The entry and the export, for the error (`entry … of …`). */
  readonly entry: string
  /** At most this many bytes; more is an {@link EntryUnreadable}. */
  readonly maxBytes: number
  /** What the cap is, for the error (`source.maxEntryBytes (…)`, `its declared size`). */
  readonly capName: string
  /** The CRC-32 the bytes must have, when known (a ZIP entry). */
  readonly crc?: number
}

/** The chunks of `source`, checked; errors of the source that are about its bytes become {@link EntryUnreadable}. */
export async function* guarded(source: AsyncIterable<Buffer>, o: GuardOptions): AsyncGenerator<Buffer> {
  let bytes = 0
  let crc = 0
  try {
    for await (const chunk of source) {
      bytes += chunk.length
      if (bytes > o.maxBytes) {
        throw new EntryUnreadable(o.entry, `inflates past ${o.maxBytes} bytes (${o.capName}): read stopped there`)
      }
      if (o.crc !== undefined) {
        crc = crc32(chunk, crc)
      }
      yield chunk
    }
  } catch (err) {
    if (err instanceof EntryUnreadable || isSystemError(err)) {
      throw err
    }
    throw new EntryUnreadable(o.entry, `is corrupt after ${bytes} inflated bytes: ${(err as Error).message}`, { cause: err })
  }
  if (o.crc !== undefined && crc >>> 0 !== o.crc >>> 0) {
    throw new EntryUnreadable(o.entry, `is corrupt: its ${bytes} bytes do not have the CRC-32 the ZIP's directory records`, {
      prefixValid: false,
    })
  }
}

/** Every chunk, concatenated. */
export async function bytesOf(chunks: AsyncIterable<Buffer>): Promise<Buffer> {
  const parts: Buffer[] = []
  for await (const chunk of chunks) {
    parts.push(chunk)
  }
  return parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts)
}

/** The bytes of `source` after its first `n` (a resumed read of a stream that cannot seek). */
export async function* skipBytes(source: AsyncIterable<Buffer>, n: number): AsyncGenerator<Buffer> {
  let left = n
  for await (const chunk of source) {
    if (left >= chunk.length) {
      left -= chunk.length
      continue
    }
    yield left > 0 ? chunk.subarray(left) : chunk
    left = 0
  }
}
