/**
 * A GridFS bucket inside a `mongodump` (`<bucket>.files.bson`, `<bucket>.chunks.bson`: for
 * Rocket.Chat's `GridFS:Uploads` store the bucket `rocketchat_uploads`, the file `_id` = the upload's
 * `_id`), read without MongoDB: the files' `length` and `chunkSize`, and where each chunk
 * (`files_id`, `n`, `data`) sits in the chunks file — one scan, kept as offsets only. A file is then
 * streamed chunk by chunk (one chunk in memory at a time, 255 KiB by Rocket.Chat's default) from
 * the chunk holding the offset. A chunk missing from the dump makes the file `truncated` before a
 * byte is sent.
 */
import { open } from 'node:fs/promises'

import { deserialize } from 'bson'

import { FileSourceError } from '../../../src/model/files.ts'
import { readDumpDocuments } from '../dump/bson-file.ts'
import { idOf } from './upload-index.ts'

interface ChunkAt {
  readonly offset: number
  readonly length: number
}

interface GridFile {
  readonly length: number
  readonly chunkSize: number
}

export interface GridFsIndex {
  readonly files: ReadonlyMap<string, GridFile>
  /** Per file id, its chunks by `n` (sparse when the dump lacks some). */
  readonly chunks: ReadonlyMap<string, ChunkAt[]>
  readonly chunksFile: string
}

/** Scans the bucket's two files of the dump. */
export async function readGridFsIndex(filesFile: string, chunksFile: string, signal?: AbortSignal): Promise<GridFsIndex> {
  const files = new Map<string, GridFile>()
  for await (const batch of readDumpDocuments(filesFile, undefined, signal)) {
    for (const d of batch) {
      const id = idOf(d.doc?._id)
      const length = Number(d.doc?.length)
      const chunkSize = Number(d.doc?.chunkSize)
      if (id !== undefined && Number.isSafeInteger(length) && length >= 0 && Number.isSafeInteger(chunkSize) && chunkSize > 0) {
        files.set(id, { length, chunkSize })
      }
    }
  }
  const chunks = new Map<string, ChunkAt[]>()
  for await (const batch of readDumpDocuments(chunksFile, undefined, signal)) {
    for (const d of batch) {
      const id = idOf(d.doc?.files_id)
      const n = Number(d.doc?.n)
      if (id !== undefined && Number.isSafeInteger(n) && n >= 0) {
        const list = chunks.get(id) ?? []
        list[n] = { offset: d.at.offset, length: d.next.offset - d.at.offset }
        chunks.set(id, list)
      }
    }
  }
  return { files, chunks, chunksFile }
}

/** The file's bytes from `offset`, chunk by chunk; throws FileSourceError before streaming when it cannot be whole. */
export function gridFsBytes(index: GridFsIndex, id: string, offset: number): { size: number; start: number; bytes: AsyncIterable<Buffer> } {
  const file = index.files.get(id)
  if (file === undefined) {
    throw new FileSourceError('missing', `GridFS file ${id}: not in the dump's rocketchat_uploads.files`, false)
  }
  const { length, chunkSize } = file
  const count = Math.ceil(length / chunkSize)
  const list = index.chunks.get(id) ?? []
  const absent = Array.from({ length: count }, (_, n) => n).filter((n) => list[n] === undefined)
  if (absent.length > 0) {
    throw new FileSourceError(
      'truncated',
      `GridFS file ${id}: ${absent.length} of its ${count} chunks are not in the dump (n = ${absent.slice(0, 5).join(', ')}${absent.length > 5 ? ', …' : ''})`,
      false,
    )
  }
  const start = Math.min(offset, length)
  const first = Math.floor(start / chunkSize)
  async function* bytes(): AsyncGenerator<Buffer> {
    const fh = await open(index.chunksFile, 'r')
    try {
      for (let n = first; n < count; n++) {
        const at = list[n] as ChunkAt
        const raw = Buffer.allocUnsafe(at.length)
        await fh.read(raw, 0, at.length, at.offset)
        const data = deserialize(raw, { promoteBuffers: true }).data as unknown
        if (!Buffer.isBuffer(data)) {
          throw new FileSourceError('truncated', `GridFS file ${id}: chunk ${n} has no binary data`, false)
        }
        const expected = n === count - 1 ? length - n * chunkSize : chunkSize
        if (data.length !== expected) {
          throw new FileSourceError('truncated', `GridFS file ${id}: chunk ${n} holds ${data.length} bytes, ${expected} expected`, false)
        }
        yield n === first ? data.subarray(start - n * chunkSize) : data
      }
    } finally {
      await fh.close()
    }
  }
  return { size: length, start, bytes: bytes() }
}
