/**
 * What the connectors' files tests share: every attachment a connector emits (read through its
 * own session), the bytes a reader returns for one, and a SHA-256 to compare them by.
 */
import { createHash } from 'node:crypto'
import type { Readable } from 'node:stream'

import { expect } from 'vitest'

import type { SourceConnector } from '../../src/model/connector.ts'
import { type FileReader, FileSourceError } from '../../src/model/files.ts'
import type { LegacyAttachment } from '../../src/model/records.ts'

export const sha256 = (b: Uint8Array | string): string => createHash('sha256').update(b).digest('hex')

/** Every attachment of every message the connector reads, with its message id. */
export async function attachmentsOf(connector: SourceConnector): Promise<{ messageId: string; attachment: LegacyAttachment }[]> {
  const session = await connector.open()
  const out: { messageId: string; attachment: LegacyAttachment }[] = []
  try {
    for await (const page of session.read('messages')) {
      for (const row of page.rows) {
        if (row.ok) {
          for (const attachment of row.record.attachments ?? []) {
            out.push({ messageId: row.record.id, attachment })
          }
        }
      }
    }
  } finally {
    await session.close()
  }
  return out
}

/** All of a stream's bytes (the tests' files are small enough to hold). */
export async function bytesOf(body: Readable): Promise<Buffer> {
  const parts: Buffer[] = []
  for await (const c of body) {
    parts.push(typeof c === 'string' ? Buffer.from(c) : (c as Buffer))
  }
  return Buffer.concat(parts)
}

/** The bytes `reader` returns for `ref` from `offset`, with what it said of the file. */
export async function readRef(reader: FileReader, ref: string, offset = 0): Promise<{ bytes: Buffer; size?: number; start: number }> {
  const f = await reader.open(ref, { offset })
  return { bytes: await bytesOf(f.body), size: f.size, start: f.start }
}

/** The FileSourceError `reader` throws for `ref` (fails the test when it opens). */
export async function openFailure(reader: FileReader, ref: string): Promise<FileSourceError> {
  const err = await reader.open(ref).then(
    async (f) => {
      f.body.destroy()
      return undefined
    },
    (e: unknown) => e,
  )
  expect(err, `${ref} should not open`).toBeInstanceOf(FileSourceError)
  return err as FileSourceError
}
